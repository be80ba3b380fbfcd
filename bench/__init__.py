"""Benchmarks: scripts that print figures and ratios (never part of pytest)."""
