"""The app's page script: Streamlit runs it for every visitor and rerun (`app.py` and
`edt app` serve it through `toolkit/ui/asgi.py`; `AppTest` and
`streamlit run toolkit/ui/script/page_script.py` run it alone)."""

from toolkit.ui import main

main()
