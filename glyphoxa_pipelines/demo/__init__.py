"""The sample campaign and sessions `glyphoxa demo` loads."""

from pathlib import Path

DEMO_DIR = Path(__file__).resolve().parent
SAMPLE_CAMPAIGN = DEMO_DIR / "sample_campaign.yaml"
SAMPLE_SESSIONS_DIR = DEMO_DIR / "sessions"
