"""What `edt app` hands to `streamlit run`: the repository's app.py, installed with the package."""

import streamlit as st

from toolkit.ui.asgi import ROUTES, SCRIPT, lifespan

app = st.App(SCRIPT, routes=ROUTES, lifespan=lifespan)
