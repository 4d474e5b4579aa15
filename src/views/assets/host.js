// calyx's MCP App host page. The protocol lives in calyx (Rust): this page relays JSON-RPC
// between calyx (events in, posts out) and the sandbox frame, runs the sandbox, applies the
// display mode and frame size calyx decides, and reports the page's sizes. Text that comes
// from the server or the view is only ever set with textContent.
(function () {
  "use strict";
  var SANDBOX_ATTRS = "allow-scripts allow-same-origin allow-forms";
  var SANDBOX_PREFIX = "ui/notifications/sandbox-";
  var $ = function (id) { return document.getElementById(id); };

  var page = null;          // this page's generation, named on every post
  var sandboxPort = null;
  var doc = null;           // the current document control event
  var frame = null;         // the sandbox iframe
  var sandboxOrigin = null;
  var ready = false;        // the sandbox has the document: messages may flow
  var queue = [];           // messages for the view until then
  var over = false;         // closed or taken over: nothing more happens
  var mode = "inline";
  var maxHeight = 0;
  var download = null;      // {key, items}

  function post(message) {
    if (page === null || over) { return; }
    fetch("rpc", {
      method: "POST",
      headers: { "content-type": "application/json", "x-calyx-page": String(page) },
      body: JSON.stringify(message),
      credentials: "omit",
      cache: "no-store",
    }).catch(function () {});
  }

  function sizes() {
    var header = document.querySelector("header");
    var used = header ? header.offsetHeight : 0;
    return {
      inline: { width: $("main").clientWidth, maxHeight: Math.max(100, window.innerHeight - used) },
      viewport: { width: window.innerWidth, height: window.innerHeight },
    };
  }

  function hello() {
    var s = sizes();
    maxHeight = s.inline.maxHeight;
    post({
      calyx: "hello",
      locale: navigator.language || "en-US",
      timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC",
      deviceCapabilities: {
        touch: window.matchMedia("(pointer: coarse)").matches,
        hover: window.matchMedia("(hover: hover)").matches,
      },
      sizes: s,
    });
  }

  var resizeTimer = null;
  window.addEventListener("resize", function () {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(function () {
      var s = sizes();
      maxHeight = s.inline.maxHeight;
      post({ calyx: "resize", sizes: s });
    }, 150);
  });

  function notice(text, reload) {
    $("notice-text").textContent = text;
    $("reload").hidden = !reload;
    $("notice").hidden = false;
  }

  function dropFrame() {
    if (frame) { frame.remove(); }
    frame = null;
    ready = false;
    queue = [];
  }

  function mountSandbox() {
    dropFrame();
    $("notice").hidden = true;
    var url = new URL("http://" + location.hostname + ":" + sandboxPort + doc.sandbox);
    sandboxOrigin = url.origin;
    frame = document.createElement("iframe");
    frame.setAttribute("sandbox", SANDBOX_ATTRS);
    frame.setAttribute("allow", "clipboard-write");
    frame.setAttribute("referrerpolicy", "no-referrer");
    frame.src = url.href;
    $("frame-box").appendChild(frame);
  }

  function toSandbox(message) {
    if (frame && frame.contentWindow && sandboxOrigin) {
      frame.contentWindow.postMessage(message, sandboxOrigin);
    }
  }

  function toView(message) {
    if (ready) { toSandbox(message); } else { queue.push(message); }
  }

  // The page's end: closed (the view is gone: its storage goes too) or taken over by another
  // tab (the view lives on there, with its storage).
  function end(text, clearStorage) {
    if (over) { return; }
    if (clearStorage) {
      toSandbox({ jsonrpc: "2.0", method: "ui/notifications/sandbox-teardown", params: {} });
    }
    over = true;
    events.close();
    // Let the sandbox clear its storage before its frame goes.
    setTimeout(dropFrame, 300);
    $("close").hidden = true;
    notice(text, false);
  }

  function setMode(next) {
    mode = next;
    var box = $("frame-box");
    box.classList.remove("fullscreen", "pip");
    if (mode !== "inline") { box.classList.add(mode); }
  }

  // calyx's theme for the page itself (the app gets it in hostContext): only CSS colour
  // values calyx computed, applied as style properties, never as markup.
  function applyLook(look) {
    if (!look || typeof look !== "object") { return; }
    var root = document.documentElement.style;
    if (look.theme === "dark" || look.theme === "light") { root.colorScheme = look.theme; }
    if (typeof look.background === "string") { document.body.style.background = look.background; }
    if (typeof look.text === "string") { document.body.style.color = look.text; }
    if (typeof look.border === "string") { root.setProperty("--calyx-border", look.border); }
  }

  function setSize(control) {
    if (!frame) { return; }
    if (typeof control.height === "number") {
      var h = maxHeight > 0 ? Math.min(control.height, maxHeight) : control.height;
      frame.style.height = Math.max(0, h) + "px";
    }
    if (typeof control.width === "number") {
      frame.style.width = "min(" + Math.max(0, control.width) + "px, 100%)";
    }
  }

  function humanSize(bytes) {
    if (bytes < 1024) { return bytes + " B"; }
    if (bytes < 1024 * 1024) { return (bytes / 1024).toFixed(1) + " KiB"; }
    return (bytes / 1024 / 1024).toFixed(1) + " MiB";
  }

  function nameOf(uri, fallback) {
    try {
      var parts = new URL(uri).pathname.split("/");
      return decodeURIComponent(parts[parts.length - 1]) || fallback;
    } catch (e) { return fallback; }
  }

  // The view's download-file contents as things the browser can save: embedded resources as
  // blobs, resource links only when http(s).
  function downloadItems(params) {
    var items = [];
    (params && Array.isArray(params.contents) ? params.contents : []).forEach(function (c, n) {
      if (c && c.type === "resource" && c.resource) {
        var r = c.resource;
        var type = typeof r.mimeType === "string" ? r.mimeType : "application/octet-stream";
        var blob = null;
        if (typeof r.text === "string") {
          blob = new Blob([r.text], { type: type });
        } else if (typeof r.blob === "string") {
          try {
            var raw = atob(r.blob);
            var bytes = new Uint8Array(raw.length);
            for (var i = 0; i < raw.length; i++) { bytes[i] = raw.charCodeAt(i); }
            blob = new Blob([bytes], { type: type });
          } catch (e) { blob = null; }
        }
        if (blob) {
          items.push({ name: nameOf(r.uri, "download-" + (n + 1)), size: blob.size, href: URL.createObjectURL(blob), blob: true });
        }
      } else if (c && c.type === "resource_link" && typeof c.uri === "string" && /^https?:\/\//i.test(c.uri)) {
        items.push({ name: typeof c.name === "string" ? c.name : nameOf(c.uri, "download"), size: null, href: c.uri, blob: false });
      }
    });
    return items;
  }

  function offerDownload(control) {
    if (download) { finishDownload(false); }
    var items = downloadItems(control.params);
    if (items.length === 0) {
      post({ calyx: "download-done", key: control.key, ok: false });
      return;
    }
    download = { key: control.key, items: items };
    var first = items[0];
    var text = "The app offers " + first.name + (first.size !== null ? " (" + humanSize(first.size) + ")" : "");
    if (items.length > 1) { text += " and " + (items.length - 1) + " more"; }
    $("download-text").textContent = text;
    $("download-bar").hidden = false;
  }

  function finishDownload(save) {
    if (!download) { return; }
    var current = download;
    download = null;
    $("download-bar").hidden = true;
    if (save) {
      current.items.forEach(function (item) {
        var a = document.createElement("a");
        a.href = item.href;
        a.download = item.name;
        a.rel = "noopener noreferrer";
        document.body.appendChild(a);
        a.click();
        a.remove();
      });
    }
    setTimeout(function () {
      current.items.forEach(function (item) { if (item.blob) { URL.revokeObjectURL(item.href); } });
    }, 60000);
    post({ calyx: "download-done", key: current.key, ok: save });
  }

  function openLink(url) {
    // A blank tab first, cut from this page, then sent to the URL: with "noopener" the
    // browser would return null whether or not it opened, and a blocked popup could not be told.
    var opened = window.open("about:blank", "_blank");
    if (opened) {
      opened.opener = null;
      opened.location.href = url;
      return;
    }
    var a = $("link-anchor");
    a.href = url;
    a.textContent = url;
    $("link-bar").hidden = false;
  }

  var events = new EventSource("events");

  events.addEventListener("control", function (event) {
    var control;
    try { control = JSON.parse(event.data); } catch (e) { return; }
    switch (control.type) {
      case "ready":
        applyLook(control.look);
        page = control.page;
        sandboxPort = control.sandboxPort;
        $("title").textContent = String(control.tool) + " · " + String(control.alias);
        document.title = String(control.tool) + " · calyx";
        hello();
        break;
      case "state":
        $("state").textContent = control.state + (control.reason ? ": " + control.reason : "");
        break;
      case "document":
        doc = control;
        var ignored = Array.isArray(control.ignored) ? control.ignored.map(String) : [];
        $("ignored").textContent = ignored.length ? "Ignored CSP entries: " + ignored.join(", ") : "";
        $("ignored").hidden = ignored.length === 0;
        mountSandbox();
        break;
      case "look":
        applyLook(control.look);
        break;
      case "display-mode":
        setMode(control.mode);
        break;
      case "size":
        setSize(control);
        break;
      case "download":
        offerDownload(control);
        break;
      case "open-link":
        openLink(control.url);
        break;
      case "taken-over":
        end("This view was opened in another tab", false);
        break;
      case "closed":
        end("This view was closed", true);
        break;
    }
  });

  events.addEventListener("rpc", function (event) {
    var message;
    try { message = JSON.parse(event.data); } catch (e) { return; }
    toView(message);
  });

  events.addEventListener("error", function () {
    // A removed view's URL answers 410 and the browser gives up.
    if (events.readyState === EventSource.CLOSED && !over) {
      over = true;
      dropFrame();
      notice("This view was closed", false);
    }
  });

  window.addEventListener("message", function (event) {
    if (!frame || event.source !== frame.contentWindow || event.origin !== sandboxOrigin) {
      return;
    }
    var data = event.data;
    if (!data || typeof data !== "object") { return; }
    var method = typeof data.method === "string" ? data.method : "";
    if (method === "ui/notifications/sandbox-proxy-ready") {
      toSandbox({
        jsonrpc: "2.0",
        method: "ui/notifications/sandbox-resource-ready",
        params: { html: doc.html, sandbox: SANDBOX_ATTRS, csp: doc.csp },
      });
      ready = true;
      queue.splice(0).forEach(toSandbox);
    } else if (method === "ui/notifications/sandbox-navigated") {
      dropFrame();
      notice("The view tried to navigate away", true);
    } else if (method.indexOf(SANDBOX_PREFIX) !== 0) {
      post(data);
    }
  });

  $("close").addEventListener("click", function () { post({ calyx: "close" }); });
  $("reload").addEventListener("click", function () { location.reload(); });
  $("pip-close").addEventListener("click", function () { post({ calyx: "inline" }); });
  $("download-save").addEventListener("click", function () { finishDownload(true); });
  $("download-dismiss").addEventListener("click", function () { finishDownload(false); });
  $("link-dismiss").addEventListener("click", function () { $("link-bar").hidden = true; });
  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape" && mode === "fullscreen") { post({ calyx: "inline" }); }
  });
})();
