"""TEMPORARY re-export: the Clopper–Pearson bounds live in :mod:`dpcore.stats`.

Kept only while the text audit's stage split (issue 37) still imports this path
(``dpcore/textaudit/confirm.py``, formerly ``runner.py``); delete this module once nothing does.
"""

from dpcore.stats import cp_lower, cp_upper

__all__ = ["cp_lower", "cp_upper"]
