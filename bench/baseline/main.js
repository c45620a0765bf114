// The baseline's "result": the module ran and its first frame is being produced.
requestAnimationFrame(() => {
  window.__vapFirstResultMs = performance.now();
  const channel = new MessageChannel();
  channel.port1.onmessage = () => (window.__vapFirstPaintedMs = performance.now());
  channel.port2.postMessage(null);
});
