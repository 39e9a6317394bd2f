"""The floor under every page's "first result" in bench/page_timing.py: a Streamlit page with a
title and one three-point Plotly figure, nothing else. Not part of the dashboard.

Run by ``python bench/page_timing.py`` (``streamlit run bench/floor_app.py`` to look at it).
"""

import plotly.graph_objects as go
import streamlit as st

st.title("floor")
st.plotly_chart(go.Figure(go.Scatter(x=[1, 2, 3], y=[1, 3, 2])))
