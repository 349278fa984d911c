extension UploadPage {
    /// The page's style sheet, inline in its `<style>` (allowed by its digest in the
    /// ``contentSecurityPolicy``).
    static let style = #"""

        :root { color-scheme: light dark; --accent: #2563eb; --line: #8884; --soft: #8881; }
        * { box-sizing: border-box; }
        body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; }
        main { max-width: 56rem; margin: 0 auto; padding: 1.5rem; }
        h1 { margin: 0 0 .25rem; font-size: 1.6rem; }
        h2 { font-size: 1.2rem; margin: 1.5rem 0 .5rem; }
        .lead, .muted { color: #888; }
        .lead { margin-top: 0; }
        form { display: grid; gap: .4rem; }
        label { font-weight: 600; margin-top: .4rem; }
        input[type=text] { font: inherit; padding: .45rem .6rem; border: 1px solid var(--line); border-radius: 6px; }
        .drop-zone { border: 2px dashed var(--line); border-radius: 10px; padding: 1.4rem; text-align: center; color: #888; cursor: pointer; }
        .drop-zone.over { border-color: var(--accent); background: #2563eb1a; color: inherit; }
        .file-list { list-style: none; margin: 0; padding: 0; }
        .actions { display: flex; align-items: center; gap: .8rem; margin-top: .6rem; flex-wrap: wrap; }
        button { font: inherit; font-weight: 600; padding: .5rem 1.2rem; border: 0; border-radius: 6px; background: var(--accent); color: #fff; cursor: pointer; }
        button:disabled { opacity: .5; cursor: default; }
        progress { width: 16rem; height: .9rem; }
        .error { border: 1px solid #dc2626; background: #dc26261a; border-radius: 8px; padding: .7rem 1rem; margin: 1rem 0; }
        .error strong { color: #dc2626; display: block; }
        table { border-collapse: collapse; width: 100%; margin-bottom: 1rem; }
        caption { text-align: left; font-weight: 600; padding: .3rem 0; }
        th, td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
        td.size { white-space: nowrap; text-align: right; }
        td.digest { font: 12px/1.5 ui-monospace, "SFMono-Regular", Menlo, monospace; word-break: break-all; }
        td.name { word-break: break-word; }
        .plain { margin-top: 2rem; padding-top: .5rem; border-top: 1px solid var(--line); }

        .file-list li { display: block; padding: .45rem .4rem; border-bottom: 1px solid var(--soft); }
        .file-list .line { display: flex; justify-content: space-between; align-items: center; gap: 1rem; }
        .file-list progress { width: 100%; height: .6rem; }
        .file-list li[data-state=failed] .note { color: #dc2626; }
        .file-list li[data-state=done] .note { word-break: break-all; }
        button.small { padding: .2rem .8rem; font-size: .85rem; }
        .error span { white-space: pre-line; }

        """#
}
