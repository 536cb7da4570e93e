"""The script `edt app` hands to `streamlit run` (the repository's app.py does the same)."""

from toolkit.ui import main

main()
