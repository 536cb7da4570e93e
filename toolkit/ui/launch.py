"""What `edt app` hands to `streamlit run`: the repository's app.py, installed with the package."""

import streamlit as st

from toolkit.ui.asgi import MIDDLEWARE, ROUTES, SCRIPT, lifespan

# Spelled out: `streamlit run` finds the app by reading this line, not by running the file.
app = st.App(SCRIPT, routes=ROUTES, middleware=MIDDLEWARE, lifespan=lifespan)
