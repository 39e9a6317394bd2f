"""dpcore dashboard entry point: ``streamlit run app.py``.

Pages are listed once, in :data:`pages._shared.PAGES`; this file only wires navigation.
"""

import streamlit as st

from dpcore.memory import limit_malloc_arenas
from pages._shared import PAGES, ensure_navigation, page_style

limit_malloc_arenas()  # each page runs in a new thread: two shared heaps, not one per thread
ensure_navigation()
page_style()

navigation = st.navigation(
    [st.Page(p.path, title=p.title, icon=p.icon, url_path=p.url_path, default=p.default) for p in PAGES]
)
navigation.run()
