"""Experiments built on referee's library: each a package of its own, above ``referee.train``
and ``referee.track`` (nothing below imports them).

* :mod:`referee.experiments.listops`: the embedded experiment behind ``referee train``.
"""
