/**
 * GET /docs: a readable API reference that works offline (no CDN). It renders /openapi.json
 * in the browser with a few lines of plain script.
 */
export const DOCS_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Agent Platform API</title>
<style>
body{font:15px/1.5 system-ui,sans-serif;margin:0;color:#1d1d1f;background:#fafafa}
header{padding:24px 32px;background:#111;color:#fff}main{max-width:1000px;margin:0 auto;padding:16px 32px}
h2{margin-top:32px;border-bottom:1px solid #ddd}details{background:#fff;border:1px solid #e3e3e3;border-radius:6px;margin:8px 0}
summary{cursor:pointer;padding:8px 12px;font-family:ui-monospace,monospace}
.m{display:inline-block;width:64px;font-weight:700}.get{color:#0a7d2c}.post{color:#0055c4}.put{color:#a05a00}.delete{color:#b3261e}
pre{background:#f4f4f4;padding:8px;overflow:auto;font-size:13px;margin:0 12px 12px}.d{padding:0 12px}
</style></head><body>
<header><h1 id="title">Agent Platform API</h1><div>Every request carries <code>x-api-key</code>. Machine-readable: <a style="color:#9cf" href="openapi.json">openapi.json</a></div></header>
<main id="root">Loading…</main>
<script>
fetch("openapi.json").then(r=>r.json()).then(doc=>{
  const root=document.getElementById("root");root.textContent="";
  document.getElementById("title").textContent=doc.info.title+" "+doc.info.version;
  const byTag={};
  for(const [path,ops] of Object.entries(doc.paths))for(const [method,op] of Object.entries(ops)){
    const tag=(op.tags||["Other"])[0];(byTag[tag]??=[]).push({path,method,op});
  }
  const resolve=s=>s&&s.$ref?doc.components.schemas[s.$ref.split("/").pop()]:s;
  for(const [tag,list] of Object.entries(byTag)){
    const h=document.createElement("h2");h.textContent=tag;root.append(h);
    for(const {path,method,op} of list){
      const d=document.createElement("details");const s=document.createElement("summary");
      const m=document.createElement("span");m.className="m "+method;m.textContent=method.toUpperCase();
      s.append(m,path+"  ",op.summary||"");d.append(s);
      const body=op.requestBody&&op.requestBody.content["application/json"];
      const parts=[["Parameters",op.parameters],["Request body",body&&resolve(body.schema)]];
      for(const [code,r] of Object.entries(op.responses||{})){
        const c=r.content&&r.content["application/json"];parts.push([code+" "+r.description,c&&resolve(c.schema)]);
      }
      for(const [label,v] of parts){if(!v)continue;const p=document.createElement("div");p.className="d";p.textContent=label;
        const pre=document.createElement("pre");pre.textContent=JSON.stringify(v,null,2);d.append(p,pre);}
      root.append(d);
    }
  }
});
</script></body></html>`;
