"""chadpy's tests, one folder per stage of the pipeline, `language/` by feature, helpers in `support/`."""
