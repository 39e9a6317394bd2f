"""Plotly figures built from dpcore results (no Streamlit here; pages only display them)."""
