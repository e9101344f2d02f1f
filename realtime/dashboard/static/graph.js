// The graph page: fetch the filtered elements and let cytoscape lay them out. Colours by
// entity type; secret and hidden facts dashed, so the DM sees at a glance what is not public.
(function () {
  const form = document.getElementById("graph-filters");
  const palette = ["#6a4c93", "#1982c4", "#8ac926", "#ff595e", "#ffca3a", "#4d908e", "#b5838d"];
  const cy = cytoscape({
    container: document.getElementById("graph"),
    style: [
      { selector: "node", style: { label: "data(label)", "background-color": "data(color)",
        "font-size": 11, "text-valign": "bottom", "text-margin-y": 4 } },
      { selector: "edge", style: { label: "data(label)", "font-size": 9, width: 1.5,
        "curve-style": "bezier", "target-arrow-shape": "triangle", "line-color": "#999",
        "target-arrow-color": "#999", "text-rotation": "autorotate" } },
      { selector: "edge[visibility != 'public']", style: { "line-style": "dashed",
        "line-color": "#c0392b", "target-arrow-color": "#c0392b" } },
    ],
  });
  window.glyphoxaGraph = cy;  // the browser tests read the drawn elements from here
  const colours = {};
  async function load() {
    const params = new URLSearchParams(new FormData(form));
    // No type ticked means no entity, not every type (an absent `type` is "all").
    if (!params.has("type")) params.append("type", "");
    const response = await fetch(form.dataset.url + "?" + params.toString(),
                                 { credentials: "same-origin" });
    if (!response.ok) return;
    const data = await response.json();
    for (const node of data.nodes) {
      const t = node.data.type;
      if (!(t in colours)) colours[t] = palette[Object.keys(colours).length % palette.length];
      node.data.color = colours[t];
    }
    cy.elements().remove();
    cy.add([...data.nodes, ...data.edges]);
    cy.layout({ name: "cose", animate: false }).run();
    document.getElementById("graph-count").textContent =
      data.nodes.length + " entities, " + data.edges.length + " facts";
    form.dataset.loaded = params.toString();
  }
  form.addEventListener("change", load);
  load();
})();
