"""Resources shared by pages (Streamlit-only)."""

from core.settings import Settings


def settings() -> Settings:
    """Read on every rerun (cheap), so a changed `.env` or environment takes effect."""
    return Settings()


def ensure_audit_shipper(current: Settings) -> None:
    """Start the process' background SIEM shipper once, when the settings enable it
    (``WB_AUDIT_SHIP_BACKGROUND`` and destinations). It runs beside the pages, never inside an
    answer; a failure to start is logged and never stops the page."""
    import logging

    from core.audit_ship import start_background_shipper

    try:
        start_background_shipper(current)
    except Exception:  # the app serves on without shipping; `audit ship` reports the cause
        logging.getLogger(__name__).exception("audit shipper not started")


def shown_time(value, *, seconds: bool = False) -> str:
    """A timestamp from a file (ISO-8601) as the user reads it: in ``WB_TIMEZONE``; 「不明」 when
    there is none. Every page shows times through this."""
    from core.timefmt import local_time

    return local_time(value, settings().timezone, seconds=seconds)
