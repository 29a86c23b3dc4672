"""Benchmarks and their instance generators.

`python -m bench` runs loadaware's planners and a descheduler-order baseline on
generated clusters and prints a table (bench.harness); `python -m bench.generate`
writes a generated cluster as the files `loadaware plan` reads;
`python -m bench.plan_end_to_end` times `loadaware plan` on them as a user runs it.
"""
