// Holds a click on another page of the sidebar until the app has the grid's edits.
//
// The grid keeps a committed cell in the browser until some rerun carries it (it does not rerun the page
// on each cell), and a page switch sends only the state of the widgets the next page keeps: an edit made
// just before the click was lost. So the click first presses the hidden sync button (a button's rerun
// carries every widget's state, the grid's too), waits for the marker that run draws, then goes on.
(() => {
  if (window.samplesLeaveGuard) return; // one listener per browser tab, however often the page draws this
  window.samplesLeaveGuard = true;
  const marker = () => document.querySelector("[data-samples-synced]")?.getAttribute("data-samples-synced");
  let held = null; // the link whose click waits for the sync
  document.addEventListener(
    "click",
    (event) => {
      const link = event.target.closest("[data-testid='stSidebarNav'] a");
      const sync = document.querySelector(".st-key-samples_sync button");
      if (!link || !sync || !event.isTrusted) return; // not leaving a grid, or our own replay
      event.preventDefault();
      event.stopImmediatePropagation();
      const waiting = held !== null;
      held = link.getAttribute("href"); // a second click while the sync runs: that page wins
      sync.click(); // again on a second click: a person who clicks again is never kept on this page
      if (waiting) return;
      const before = marker();
      const watch = new MutationObserver(() => {
        if (marker() === before) return;
        watch.disconnect();
        // Found again by its address: the sidebar may have been drawn anew meanwhile.
        const to = document.querySelector(`[data-testid='stSidebarNav'] a[href='${held}']`) ?? link;
        held = null;
        to.click(); // untrusted: passes this listener, and Streamlit switches the page
      });
      watch.observe(document.body, { subtree: true, childList: true, attributes: true });
    },
    true,
  );
})();
