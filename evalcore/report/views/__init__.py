"""What each page shows, as tidy tables: one module per page of the app.

:mod:`.common` holds what several pages show alike; :mod:`.home`, :mod:`.agreement`, :mod:`.bias`,
:mod:`.win_rates`, :mod:`.superficial_quality` and :mod:`.position_bias` what their page (and the
matching section of the HTML report) shows. Display names and number formats are in
:mod:`evalcore.report.display`, shared with the figures.
"""
