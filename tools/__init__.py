"""Tooling around the product, never imported by it: benchmarks, fixtures at study scale and load generators."""
