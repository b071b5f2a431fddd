// Starts Swagger UI (shipped by the swagger-ui-py package, served from /docs/swagger-ui) on the OpenAPI document.
// validatorUrl null: the reference never sends the document to an outside validator, and works offline.
window.addEventListener("load", function () {
  window.ui = SwaggerUIBundle({
    url: "/v1/openapi.json",
    dom_id: "#swagger-ui",
    deepLinking: true,
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
  });
});
