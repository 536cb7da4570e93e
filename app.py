"""The investors' app: `streamlit run app.py` (or `edt app`). It opens the mirror in EDT_DB,
else data/mirror.db; everything it shows comes through the toolkit's query layer. The page
script is `toolkit/ui/script/page_script.py`; this file serves it with the CSV download routes
(`toolkit/ui/asgi.py`)."""

import streamlit as st

from toolkit.ui.asgi import MIDDLEWARE, ROUTES, SCRIPT, lifespan

# Spelled out: `streamlit run` finds the app by reading this line, not by running the file.
app = st.App(SCRIPT, routes=ROUTES, middleware=MIDDLEWARE, lifespan=lifespan)
