"""Differential testing: run one launch on several executors or against recorded goldens."""
