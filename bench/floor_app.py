"""The floor under every page's "first result" in bench/page_timing.py: a Streamlit page with a
title and one three-point figure, nothing else. Not part of the dashboard.

``?chart=plotly`` (default) draws it with ``st.plotly_chart`` as the dashboard does;
``?chart=vega`` with ``st.vega_lite_chart``, for comparison.

Run by ``python bench/page_timing.py`` (``streamlit run bench/floor_app.py`` to look at it).
"""

import plotly.graph_objects as go
import streamlit as st

st.title("floor")
if st.query_params.get("chart") == "vega":
    st.vega_lite_chart(
        {
            "data": {"values": [{"x": 1, "y": 1}, {"x": 2, "y": 3}, {"x": 3, "y": 2}]},
            "mark": "line",
            "encoding": {
                "x": {"field": "x", "type": "quantitative"},
                "y": {"field": "y", "type": "quantitative"},
            },
        }
    )
else:
    st.plotly_chart(go.Figure(go.Scatter(x=[1, 2, 3], y=[1, 3, 2])))
