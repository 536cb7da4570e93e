"""The investors' app: `streamlit run app.py` (or `edt app`). It opens the mirror in EDT_DB,
else data/mirror.db; everything it shows comes through the toolkit's query layer."""

from toolkit.ui import main

main()
