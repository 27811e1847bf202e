import { clear, h } from "./dom.js";
import { PAGES } from "./pages/index.js";

// Entry of the dashboard bundle: mounts the module of the page the server's shell names.
async function start(): Promise<void> {
  const root = document.getElementById("page");
  if (!root) {
    return;
  }
  const page = PAGES[root.dataset.page ?? ""];
  if (!page) {
    clear(root, h("p", { class: "state error", role: "alert" }, "This page could not be loaded."));
    return;
  }
  // The shell's "Loading…" goes; anything else the server rendered (the project list) is the page's.
  for (const placeholder of root.querySelectorAll("[data-placeholder]")) {
    placeholder.remove();
  }
  await page({ root, projectId: root.dataset.projectId ?? "" });
}

void start();
