"""Tests of the wiki memory (``commonkeep.wiki``) and its Dossier CLI."""
