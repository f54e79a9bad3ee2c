"""Evaluation harnesses: retrieval quality on public benchmarks."""
