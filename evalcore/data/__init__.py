"""Getting data in: file readers, column mapping and validation, presets (one module per format),
the read -> map -> validate pipeline, the DuckDB workspace, and the sample-data generator."""
