"""Test-session set-up shared by every test.

Streamlit's ``AppTest.run()`` scans the metadata of every installed distribution for custom
component manifests on each run (about 0.3–0.8 s here, with ~650 packages installed), and the
page tests make a few hundred runs. The installed packages cannot change during a test session,
so the scan's result is computed once and reused; what each page script does is unchanged.
"""

from __future__ import annotations

import functools


def _cache_component_scan() -> None:
    try:
        from streamlit.components.v2 import manifest_scanner
    except ImportError:  # another Streamlit version: nothing to cache
        return
    scan = getattr(manifest_scanner, "scan_component_manifests", None)
    if scan is None or hasattr(scan, "cache_info"):
        return
    manifest_scanner.scan_component_manifests = functools.cache(scan)


_cache_component_scan()
