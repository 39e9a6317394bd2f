"""The pair test every audit shares: one floor below the vector, word and rewriter audits.

An audit of a privacy claim ends in pair tests: for two inputs x, x′ and an event S chosen on
one half of the draws, the other half bounds ln Pr[M(x) ∈ S] − ln Pr[M(x′) ∈ S] from below with
Clopper–Pearson bounds and compares it with the claim. This package holds what every audit uses
for it, and imports nothing of any audit:

- :mod:`dpcore.pairtest.budget`: α = 1 − confidence and its split among tests, the only place
  an audit divides α (``tests/test_textaudit_structure.py`` fences every audit);
- :mod:`dpcore.pairtest.estimator`: the estimator, an event chosen on one half and bounded on
  the other (the Neyman–Pearson prefix, the point estimate, the lower bound);
- :mod:`dpcore.pairtest.power`: the exact chance that a test flags a violation, and the
  smallest violation it flags with probability ≥ 0.9.
"""
