// The API reference page's own script, served after Swagger UI's bundle from this origin (no inline
// script: the page's CSP is script-src 'self'). It renders the OpenAPI document the page names.
const root = document.getElementById("reference");
globalThis.ui = globalThis.SwaggerUIBundle({
  url: root.dataset.document,
  domNode: root,
  deepLinking: true,
  displayOperationId: true,
  // No badge from swagger.io's validator: the page loads nothing from other origins.
  validatorUrl: null,
  // "Try it" sends the reader's own key or token from this tab; it is never written to storage.
  persistAuthorization: false,
});
