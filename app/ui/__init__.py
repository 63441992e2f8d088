"""What every page shares: error display and the action guard, form checks, paging, the file uploader, the
keyboard and live-text components, the reopen offer and a run's summary.
"""
