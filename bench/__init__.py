"""Benchmarks and their instance generators.

`python -m bench` runs loadaware's planners and a descheduler-order baseline on
generated clusters and prints a table (bench.harness); `python -m bench.generate`
writes a generated cluster as the files `loadaware plan` reads.
"""
