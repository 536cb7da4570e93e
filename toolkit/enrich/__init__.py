"""Enrichment: metrics computed from a listing's data (the quality score, ...)."""

from .score import quality_score

__all__ = ["quality_score"]
