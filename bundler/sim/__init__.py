"""Simulated clusters and Flux for the local demo and the benchmarks."""
