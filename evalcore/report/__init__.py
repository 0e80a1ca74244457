"""What the pages and reports show: plotly figure builders and the tables behind them."""
