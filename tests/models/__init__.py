"""Reference models and harnesses shared by several test files (tests import these, never each other)."""
