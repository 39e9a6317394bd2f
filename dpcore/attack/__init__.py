"""Attacks on sanitized text (SanText, Yue et al. 2021, §5.3)."""
