"""The folder of the app's page script: apart from `ui/pages/`, which Streamlit would take for
a list of pages of its own (a `pages/` folder beside the script it runs)."""
