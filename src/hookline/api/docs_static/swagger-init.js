// Starts Swagger UI on /docs. A file of its own, not an inline script, so the page's
// Content-Security-Policy can refuse every inline script.
"use strict";
(function () {
  const root = document.getElementById("swagger-ui");
  window.ui = SwaggerUIBundle({
    url: root.dataset.openapiUrl,
    dom_id: "#swagger-ui",
    deepLinking: true,
    showExtensions: true,
    showCommonExtensions: true,
    // No call to the public validator service: everything stays on this origin.
    validatorUrl: null,
    // A key entered under Authorize lives in this page only: never written to browser storage.
    persistAuthorization: false,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIBundle.SwaggerUIStandalonePreset],
    layout: "BaseLayout",
  });
})();
