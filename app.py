"""dpcore dashboard entry point: ``streamlit run app.py``.

Pages are listed once, in :data:`pages._shared.PAGES`; this file only wires navigation.
"""

import streamlit as st

from pages._shared import PAGES, ensure_navigation, page_style

ensure_navigation()
page_style()

navigation = st.navigation(
    [st.Page(p.path, title=p.title, icon=p.icon, url_path=p.url_path, default=p.default) for p in PAGES]
)
navigation.run()
