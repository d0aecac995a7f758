// The frame budget of Gradio's orphaned status-tracker loop: arena/web/early_script.py writes it first into the page.
(() => {
  const frame = window.requestAnimationFrame.bind(window);
  const cancel = window.cancelAnimationFrame.bind(window);
  const waiting = new Map();
  let last = 0;
  const timerInView = () => document.querySelector(".wrap.full:not(.hide), .wrap.minimal:not(.hide)") !== null;
  const fromStatusTracker = () => {
    const caller = (new Error().stack || "").split("\n").find((line) => line.includes(".js"));
    return caller !== undefined && caller.includes("/statustracker-");
  };
  window.requestAnimationFrame = (callback) => {
    if (!fromStatusTracker() || timerInView()) return frame(callback);
    const id = --last;  // below zero: never one of the browser's own frame ids
    waiting.set(id, window.setTimeout(() => { waiting.delete(id); frame(callback); }, 1000));
    return id;
  };
  window.cancelAnimationFrame = (id) => {
    if (!waiting.has(id)) return cancel(id);
    window.clearTimeout(waiting.get(id));
    waiting.delete(id);
  };
})();
