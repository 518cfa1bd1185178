"""Shared helpers of the test suite: fakes of the edges, fixtures built from small data."""
