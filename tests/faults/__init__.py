"""Fault-injection helpers shared by tests/test_faults.py and bench/faults.py."""
