"""Catalogue of malformed (and valid-but-unusual) PTX inputs; see catalogue.py."""
