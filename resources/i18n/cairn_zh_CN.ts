<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>AgentsWindow</name>
    <message>
        <source>Cairn — Agents</source>
        <translation>Cairn — 智能体</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>Verified</source>
        <translation>验证方式</translation>
    </message>
    <message>
        <source>Created</source>
        <translation>创建时间</translation>
    </message>
    <message>
        <source>Last seen</source>
        <translation>最近活动</translation>
    </message>
    <message>
        <source>New agent name, e.g. claude-code</source>
        <translation>新智能体名称，例如 claude-code</translation>
    </message>
    <message>
        <source>Lower-case letters, digits, &apos;.&apos;, &apos;_&apos; or &apos;-&apos;, up to 64 characters</source>
        <translation>小写字母、数字、“.”、“_”或“-”，最多 64 个字符</translation>
    </message>
    <message>
        <source>&amp;Add</source>
        <translation>添加(&amp;A)</translation>
    </message>
    <message>
        <source>Register the agent</source>
        <translation>注册该智能体</translation>
    </message>
    <message>
        <source>&amp;Pause</source>
        <translation>暂停(&amp;P)</translation>
    </message>
    <message>
        <source>Refuse its requests until resumed</source>
        <translation>在恢复之前拒绝它的所有请求</translation>
    </message>
    <message>
        <source>&amp;Resume</source>
        <translation>恢复(&amp;R)</translation>
    </message>
    <message>
        <source>Let it work again</source>
        <translation>让它重新开始工作</translation>
    </message>
    <message>
        <source>Re&amp;voke…</source>
        <translation>吊销(&amp;V)…</translation>
    </message>
    <message>
        <source>Withdraw its token for good (asks first)</source>
        <translation>永久收回它的令牌（会先询问）</translation>
    </message>
    <message>
        <source>token</source>
        <translation>令牌</translation>
    </message>
    <message>
        <source>none (revoked)</source>
        <translation>无（已吊销）</translation>
    </message>
    <message>
        <source>declared only</source>
        <translation>仅声明</translation>
    </message>
    <message>
        <source>never</source>
        <translation>从未</translation>
    </message>
    <message>
        <source>active</source>
        <translation>活动</translation>
    </message>
    <message>
        <source>paused</source>
        <translation>已暂停</translation>
    </message>
    <message>
        <source>revoked</source>
        <translation>已吊销</translation>
    </message>
    <message>
        <source>Revoke this agent?</source>
        <translation>吊销此智能体？</translation>
    </message>
    <message>
        <source>Revoke “{}”?</source>
        <translation>吊销“{}”？</translation>
    </message>
    <message>
        <source>Its token stops working at once and cannot be restored; its memories stay. To let it work again you register it anew and give it the new token.</source>
        <translation>它的令牌会立即失效且无法恢复；它的记忆会保留。若要让它重新工作，请重新注册它，并把新令牌交给它。</translation>
    </message>
    <message>
        <source>Revoke</source>
        <translation>吊销</translation>
    </message>
</context>
<context>
    <name>ArchiveWindow</name>
    <message>
        <source>Cairn — Export and import</source>
        <translation>Cairn — 导出与导入</translation>
    </message>
    <message>
        <source>Working…</source>
        <translation>处理中…</translation>
    </message>
    <message>
        <source>Export</source>
        <translation>导出</translation>
    </message>
    <message>
        <source>Scopes:</source>
        <translation>范围：</translation>
    </message>
    <message>
        <source>Global</source>
        <translation>全局</translation>
    </message>
    <message>
        <source>User</source>
        <translation>用户</translation>
    </message>
    <message>
        <source>Project</source>
        <translation>项目</translation>
    </message>
    <message>
        <source>Session</source>
        <translation>会话</translation>
    </message>
    <message>
        <source>Projects whose memories to include. Select none to include every project; global and user memories are not affected.</source>
        <translation>要包含其记忆的项目。不选择任何项目即包含所有项目；全局记忆和用户记忆不受影响。</translation>
    </message>
    <message>
        <source>Where to save the archive.</source>
        <translation>存档文件的保存位置。</translation>
    </message>
    <message>
        <source>Save to:</source>
        <translation>保存到：</translation>
    </message>
    <message>
        <source>Write the archive. It holds your memories&apos; full text: keep it private.</source>
        <translation>写出存档文件。其中包含你的记忆全文：请妥善保管，不要外传。</translation>
    </message>
    <message>
        <source>Projects (none selected: all of them):</source>
        <translation>项目（不选即为全部）：</translation>
    </message>
    <message>
        <source>Import</source>
        <translation>导入</translation>
    </message>
    <message>
        <source>A Cairn archive (.zip) or a JSON-lines file of memories (.jsonl).</source>
        <translation>Cairn 存档（.zip）或记忆的 JSON Lines 文件（.jsonl）。</translation>
    </message>
    <message>
        <source>Show what the import would do, changing nothing.</source>
        <translation>显示导入将会做什么，不做任何更改。</translation>
    </message>
    <message>
        <source>Bring the file in, after you confirm.</source>
        <translation>经你确认后导入该文件。</translation>
    </message>
    <message>
        <source>File:</source>
        <translation>文件：</translation>
    </message>
    <message numerus="yes">
        <source>{} (%n memories)</source>
        <translation>
            <numerusform>{}（%n 条记忆）</numerusform>
        </translation>
    </message>
    <message>
        <source>Exported {} ({}) to {}.</source>
        <translation>已导出 {}（{}）到 {}。</translation>
    </message>
    <message numerus="yes">
        <source>%n memories</source>
        <translation>
            <numerusform>%n 条记忆</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n revisions</source>
        <translation>
            <numerusform>%n 个修订版本</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Preview of {} (nothing was changed): it would add %n memories.</source>
        <translation>
            <numerusform>{} 的预览（未做任何更改）：将添加 %n 条记忆。</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Imported {}: added %n memories.</source>
        <translation>
            <numerusform>已导入 {}：添加了 %n 条记忆。</numerusform>
        </translation>
    </message>
    <message>
        <source>— folder missing</source>
        <translation>— 文件夹不存在</translation>
    </message>
    <message>
        <source>&amp;Choose…</source>
        <translation>选择(&amp;C)…</translation>
    </message>
    <message>
        <source>&amp;Export</source>
        <translation>导出(&amp;E)</translation>
    </message>
    <message>
        <source>C&amp;hoose…</source>
        <translation>选择(&amp;H)…</translation>
    </message>
    <message>
        <source>&amp;Preview (dry run)</source>
        <translation>预览（预演）(&amp;P)</translation>
    </message>
    <message>
        <source>&amp;Import…</source>
        <translation>导入(&amp;I)…</translation>
    </message>
    <message>
        <source>Export to</source>
        <translation>导出到</translation>
    </message>
    <message>
        <source>Cairn archives (*.zip)</source>
        <translation>Cairn 存档 (*.zip)</translation>
    </message>
    <message>
        <source>Exporting…</source>
        <translation>正在导出…</translation>
    </message>
    <message>
        <source>Records per file:</source>
        <translation>各文件的记录数：</translation>
    </message>
    <message>
        <source>Left out:</source>
        <translation>未包含：</translation>
    </message>
    <message>
        <source>Nothing was left out.</source>
        <translation>没有遗漏任何内容。</translation>
    </message>
    <message numerus="yes">
        <source>Warning: the folder of project {0} ({1}) holds a control character in its name. Another Cairn does not take such a folder, so the %n memories of this project are not imported there. Move the project to a clean folder (`cairn workspace move {1} NEW-FOLDER`) and export again.</source>
        <translation>
            <numerusform>警告：项目 {0}（{1}）的文件夹名称中含有控制字符。其他 Cairn 不接受这样的文件夹，因此该项目的 %n 条记忆不会导入到那里。请把该项目移到名称干净的文件夹（`cairn workspace move {1} NEW-FOLDER`），然后重新导出。</numerusform>
        </translation>
    </message>
    <message>
        <source>Audit log: lines of {} that could not be read, left out: {}</source>
        <translation>审计日志：{} 中无法读取的行已略去：{}</translation>
    </message>
    <message>
        <source>Audit log: events missing (in no rotated file and not in the database): {}</source>
        <translation>审计日志：缺失的事件（既不在任何轮转文件中，也不在数据库中）：{}</translation>
    </message>
    <message>
        <source>Audit log: events of another history (a replaced database) not included: {} (kept in the state directory&apos;s audit/ folder)</source>
        <translation>审计日志：未包含的另一段历史（被替换的数据库）的事件：{}（保存在状态目录的 audit/ 文件夹中）</translation>
    </message>
    <message>
        <source>Import from</source>
        <translation>从文件导入</translation>
    </message>
    <message>
        <source>Cairn archives and JSON lines (*.zip *.jsonl);;All files (*)</source>
        <translation>Cairn 存档和 JSON Lines 文件 (*.zip *.jsonl);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Import memories?</source>
        <translation>导入记忆？</translation>
    </message>
    <message>
        <source>Import {}? What it brings in lands without review as your own decision.</source>
        <translation>导入 {}？导入的内容不经审核直接存入，视为你本人的决定。</translation>
    </message>
    <message>
        <source>Preview it first if you are not sure what it holds.</source>
        <translation>如果不确定其中的内容，请先预览。</translation>
    </message>
    <message>
        <source>Reading the file…</source>
        <translation>正在读取文件…</translation>
    </message>
    <message>
        <source>Importing…</source>
        <translation>正在导入…</translation>
    </message>
    <message>
        <source>updated</source>
        <translation>已更新</translation>
    </message>
    <message>
        <source>revisions added to memories already here</source>
        <translation>为已有记忆添加的修订版本</translation>
    </message>
    <message>
        <source>unchanged (already here)</source>
        <translation>未变化（已存在）</translation>
    </message>
    <message>
        <source>skipped: you forgot them</source>
        <translation>已跳过：你已遗忘它们</translation>
    </message>
    <message>
        <source>refused (a secret)</source>
        <translation>已拒绝（含机密）</translation>
    </message>
    <message>
        <source>lines that are not a valid memory</source>
        <translation>不是有效记忆的行</translation>
    </message>
    <message>
        <source>conflicts (this store&apos;s copy kept)</source>
        <translation>冲突（保留本库中的副本）</translation>
    </message>
    <message>
        <source>released (what replaced them is not here)</source>
        <translation>已释放（取代它们的记忆不在本库中）</translation>
    </message>
    <message>
        <source>relations added</source>
        <translation>已添加的关联</translation>
    </message>
    <message>
        <source>identity versions added</source>
        <translation>已添加的身份文档版本</translation>
    </message>
    <message>
        <source>workspaces added</source>
        <translation>已添加的工作区</translation>
    </message>
    <message>
        <source>Lines not taken in:</source>
        <translation>未导入的行：</translation>
    </message>
    <message>
        <source>  line {}: {}</source>
        <translation>  第 {} 行：{}</translation>
    </message>
    <message>
        <source>  … and {} more (`cairn import --dry-run FILE` lists them all)</source>
        <translation>  …… 还有 {} 条（`cairn import --dry-run FILE` 会全部列出）</translation>
    </message>
    <message>
        <source>Memories not taken in (a secret):</source>
        <translation>未导入的记忆（含有密钥）：</translation>
    </message>
    <message>
        <source>Never imported from an archive: {}.</source>
        <translation>从不从存档导入：{}。</translation>
    </message>
    <message>
        <source>The export failed: {}</source>
        <translation>导出失败：{}</translation>
    </message>
    <message>
        <source>The import failed: {}</source>
        <translation>导入失败：{}</translation>
    </message>
</context>
<context>
    <name>DetailPanel</name>
    <message>
        <source>&amp;Edit…</source>
        <translation>编辑(&amp;E)…</translation>
    </message>
    <message>
        <source>Ctrl+E</source>
        <translation>Ctrl+E</translation>
    </message>
    <message>
        <source>&amp;Pin</source>
        <translation>置顶(&amp;P)</translation>
    </message>
    <message>
        <source>&amp;Archive</source>
        <translation>归档(&amp;A)</translation>
    </message>
    <message>
        <source>&amp;Forget…</source>
        <translation>遗忘(&amp;F)…</translation>
    </message>
    <message>
        <source>Erase this memory for good (asks first)</source>
        <translation>永久抹除这条记忆（会先询问）</translation>
    </message>
    <message>
        <source>Revision</source>
        <translation>修订版本</translation>
    </message>
    <message>
        <source>Change</source>
        <translation>变更</translation>
    </message>
    <message>
        <source>By</source>
        <translation>操作者</translation>
    </message>
    <message>
        <source>When</source>
        <translation>时间</translation>
    </message>
    <message>
        <source>Text</source>
        <translation>文本</translation>
    </message>
    <message>
        <source>Every revision of this memory, newest first</source>
        <translation>这条记忆的所有修订版本，最新的在前</translation>
    </message>
    <message>
        <source>History</source>
        <translation>历史</translation>
    </message>
    <message>
        <source>Select a memory to see it here.</source>
        <translation>选择一条记忆，即可在此查看。</translation>
    </message>
    <message>
        <source>{id} · revision {rev} · {kind} · {scope} · {status}</source>
        <translation>{id} · 修订版本 {rev} · {kind} · {scope} · {status}</translation>
    </message>
    <message>
        <source>Flagged: {}. What the scanner flags is shown as [BLOCKED: rule], as agents would read it.</source>
        <translation>已标记：{}。扫描器标记的内容显示为 [BLOCKED: rule]，与智能体读到的一样。</translation>
    </message>
    <message>
        <source>Summary: {}</source>
        <translation>摘要：{}</translation>
    </message>
    <message>
        <source>Tags: {}</source>
        <translation>标签：{}</translation>
    </message>
    <message>
        <source>Importance: {} · tier: {} · agent: {}</source>
        <translation>重要性：{} · 层级：{} · 智能体：{}</translation>
    </message>
    <message>
        <source>Created {} · updated {}</source>
        <translation>创建于 {} · 更新于 {}</translation>
    </message>
    <message numerus="yes">
        <source>Recalled %n time(s), last {}</source>
        <translation>
            <numerusform>已被调用 %n 次，最近一次：{}</numerusform>
        </translation>
    </message>
    <message>
        <source>(folder missing)</source>
        <translation>（文件夹不存在）</translation>
    </message>
    <message>
        <source>Workspace: {}</source>
        <translation>工作区：{}</translation>
    </message>
    <message>
        <source>📌 Pinned: searches rank it higher, and it is never archived for going unused</source>
        <translation>📌 已置顶：搜索时排名更靠前，也不会因久未使用而被归档</translation>
    </message>
    <message>
        <source>Expired {}</source>
        <translation>已于 {} 过期</translation>
    </message>
    <message>
        <source>Expires {}</source>
        <translation>过期时间：{}</translation>
    </message>
    <message>
        <source>Un&amp;pin</source>
        <translation>取消置顶(&amp;P)</translation>
    </message>
    <message>
        <source>Rest&amp;ore</source>
        <translation>还原(&amp;O)</translation>
    </message>
    <message>
        <source>a forgotten memory ({})</source>
        <translation>一条已遗忘的记忆（{}）</translation>
    </message>
    <message>
        <source>Replaces {}</source>
        <translation>取代了 {}</translation>
    </message>
    <message>
        <source>Replaced by {}</source>
        <translation>已被取代：{}</translation>
    </message>
    <message>
        <source>Contradicts {}</source>
        <translation>与之矛盾：{}</translation>
    </message>
    <message>
        <source>(open)</source>
        <translation>（未解决）</translation>
    </message>
    <message>
        <source>(resolved {})</source>
        <translation>（已于 {} 解决）</translation>
    </message>
</context>
<context>
    <name>DocumentEditor</name>
    <message>
        <source>Why you changed it (optional)</source>
        <translation>修改原因（可选）</translation>
    </message>
    <message>
        <source>&amp;Save as a new version</source>
        <translation>保存为新版本(&amp;S)</translation>
    </message>
    <message>
        <source>Writes a new version; every earlier one is kept (Ctrl+S)</source>
        <translation>写入一个新版本；之前的所有版本都会保留（Ctrl+S）</translation>
    </message>
    <message>
        <source>Ctrl+S</source>
        <translation>Ctrl+S</translation>
    </message>
    <message>
        <source>&amp;Discard my changes</source>
        <translation>放弃我的修改(&amp;D)</translation>
    </message>
    <message>
        <source>Editing {}, based on version {}</source>
        <translation>正在编辑 {}，基于版本 {}</translation>
    </message>
</context>
<context>
    <name>HealthWindow</name>
    <message>
        <source>Cairn — Health</source>
        <translation>Cairn — 健康状况</translation>
    </message>
    <message>
        <source>Memories</source>
        <translation>记忆</translation>
    </message>
    <message>
        <source>Waiting for review</source>
        <translation>等待审核</translation>
    </message>
    <message>
        <source>Capture</source>
        <translation>记录功能</translation>
    </message>
    <message>
        <source>Agents connected</source>
        <translation>已连接的智能体</translation>
    </message>
    <message>
        <source>Last write</source>
        <translation>最近写入</translation>
    </message>
    <message>
        <source>Last search</source>
        <translation>最近搜索</translation>
    </message>
    <message>
        <source>Expired, awaiting purge</source>
        <translation>已过期，等待清除</translation>
    </message>
    <message>
        <source>Database size</source>
        <translation>数据库大小</translation>
    </message>
    <message>
        <source>Audit events</source>
        <translation>审计事件</translation>
    </message>
    <message>
        <source>Counter</source>
        <translation>计数项</translation>
    </message>
    <message>
        <source>Value</source>
        <translation>数值</translation>
    </message>
    <message>
        <source>Counts by scope, kind, status and tier; refusals</source>
        <translation>按范围、类型、状态和层级统计的数量，以及拒绝次数</translation>
    </message>
    <message>
        <source>Agent</source>
        <translation>智能体</translation>
    </message>
    <message>
        <source>Requests</source>
        <translation>请求</translation>
    </message>
    <message>
        <source>Writes</source>
        <translation>写入</translation>
    </message>
    <message>
        <source>Refusals</source>
        <translation>拒绝</translation>
    </message>
    <message>
        <source>Last seen</source>
        <translation>最近活动</translation>
    </message>
    <message>
        <source>Verified</source>
        <translation>已验证</translation>
    </message>
    <message>
        <source>Each agent&apos;s activity since Cairn started</source>
        <translation>自 Cairn 启动以来各智能体的活动</translation>
    </message>
    <message>
        <source>No agent has connected since Cairn started. Each agent that connects gets a row here.</source>
        <translation>Cairn 启动以来还没有智能体连接。每个连接的智能体在这里占一行。</translation>
    </message>
    <message>
        <source>Agents since Cairn started</source>
        <translation>自 Cairn 启动以来的智能体</translation>
    </message>
    <message numerus="yes">
        <source>%n warning(s):</source>
        <translation>
            <numerusform>%n 条警告：</numerusform>
        </translation>
    </message>
    <message>
        <source>{} (oldest waiting {})</source>
        <translation>{}（最早的已等待 {}）</translation>
    </message>
    <message>
        <source>oldest waiting</source>
        <translation>最早的已等待</translation>
    </message>
    <message>
        <source>{} dropped when the queue was full</source>
        <translation>队列满时丢弃了 {} 条</translation>
    </message>
    <message>
        <source>Paused</source>
        <translation>已暂停</translation>
    </message>
    <message>
        <source>Running</source>
        <translation>运行中</translation>
    </message>
    <message>
        <source>{} now, {} since start</source>
        <translation>当前 {}，启动以来 {}</translation>
    </message>
    <message>
        <source>never</source>
        <translation>从未</translation>
    </message>
    <message>
        <source>{} (log {})</source>
        <translation>{}（日志 {}）</translation>
    </message>
    <message numerus="yes">
        <source>%n file(s) kept by restores: {} (remove them when no longer needed)</source>
        <translation>
            <numerusform>恢复时保留的 %n 个文件：{}（不再需要时请删除）</numerusform>
        </translation>
    </message>
    <message>
        <source>memories</source>
        <translation>记忆</translation>
    </message>
    <message>
        <source>refusals</source>
        <translation>拒绝</translation>
    </message>
    <message>
        <source>held for review</source>
        <translation>待审核</translation>
    </message>
    <message>
        <source>review queue</source>
        <translation>审核队列</translation>
    </message>
    <message>
        <source>connections</source>
        <translation>连接</translation>
    </message>
    <message>
        <source>background failures</source>
        <translation>后台任务失败</translation>
    </message>
    <message>
        <source>by scope</source>
        <translation>按范围</translation>
    </message>
    <message>
        <source>by kind</source>
        <translation>按类型</translation>
    </message>
    <message>
        <source>by status</source>
        <translation>按状态</translation>
    </message>
    <message>
        <source>by author tier</source>
        <translation>按作者层级</translation>
    </message>
    <message>
        <source>waiting</source>
        <translation>等待中</translation>
    </message>
    <message>
        <source>dropped when the queue was full</source>
        <translation>队列满时丢弃</translation>
    </message>
    <message>
        <source>open now</source>
        <translation>当前打开</translation>
    </message>
    <message>
        <source>since start</source>
        <translation>自启动以来</translation>
    </message>
    <message>
        <source>refused: another user</source>
        <translation>拒绝：其他用户</translation>
    </message>
    <message>
        <source>refused: too many connections</source>
        <translation>拒绝：连接过多</translation>
    </message>
    <message>
        <source>refused at hello</source>
        <translation>在 hello 时拒绝</translation>
    </message>
    <message>
        <source>malformed frames</source>
        <translation>格式错误的帧</translation>
    </message>
    <message>
        <source>pushes dropped (reader too slow)</source>
        <translation>丢弃的推送（读取太慢）</translation>
    </message>
    <message>
        <source>cut: answers not read</source>
        <translation>断开：未读取回答</translation>
    </message>
    <message>
        <source>times</source>
        <translation>次数</translation>
    </message>
    <message>
        <source>last error</source>
        <translation>最近的错误</translation>
    </message>
    <message>
        <source>last failed</source>
        <translation>最近失败于</translation>
    </message>
    <message>
        <source>{} s</source>
        <translation>{} 秒</translation>
    </message>
    <message>
        <source>{} min</source>
        <translation>{} 分钟</translation>
    </message>
    <message>
        <source>{} h {} min</source>
        <translation>{} 小时 {} 分钟</translation>
    </message>
    <message>
        <source>{} h</source>
        <translation>{} 小时</translation>
    </message>
    <message>
        <source>{} d {} h</source>
        <translation>{} 天 {} 小时</translation>
    </message>
    <message>
        <source>{} d</source>
        <translation>{} 天</translation>
    </message>
    <message numerus="yes">
        <source>{} second(s)</source>
        <translation>
            <numerusform>{} 秒</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>{} byte(s)</source>
        <translation>
            <numerusform>{} 字节</numerusform>
        </translation>
    </message>
    <message>
        <source>yes</source>
        <translation>是</translation>
    </message>
    <message>
        <source>no</source>
        <translation>否</translation>
    </message>
</context>
<context>
    <name>IdentityWindow</name>
    <message>
        <source>Cairn — Identity</source>
        <translation>Cairn — 身份文档</translation>
    </message>
    <message>
        <source>The identity documents</source>
        <translation>身份文档</translation>
    </message>
    <message>
        <source>{}: version {}</source>
        <translation>{}：版本 {}</translation>
    </message>
    <message>
        <source>User profile</source>
        <translation>用户档案</translation>
    </message>
    <message>
        <source>Soul (shared default)</source>
        <translation>灵魂（共享默认）</translation>
    </message>
    <message>
        <source>Soul of {}</source>
        <translation>{} 的灵魂</translation>
    </message>
    <message>
        <source>{} changed while you were editing (it is now at version {}). Your text is kept; compare, then save again or discard your changes.</source>
        <translation>{} 在你编辑期间已被修改（现在是版本 {}）。你的文本已保留；请比较后再次保存，或放弃你的修改。</translation>
    </message>
    <message>
        <source>Nothing to save: the text is version {}&apos;s.</source>
        <translation>无需保存：文本与版本 {} 相同。</translation>
    </message>
    <message>
        <source>Saved {} as version {}.</source>
        <translation>已将 {} 保存为版本 {}。</translation>
    </message>
    <message>
        <source>Not saved: {}. Your text is kept; save again to write it over version {}, or discard your changes.</source>
        <translation>未保存：{}。你的文本已保留；再次保存即会在版本 {} 之上写入，或者放弃你的修改。</translation>
    </message>
    <message>
        <source>Not saved: {}</source>
        <translation>未保存：{}</translation>
    </message>
    <message>
        <source>The document changed; preview the revert again.</source>
        <translation>文档已更改；请重新预览恢复操作。</translation>
    </message>
    <message>
        <source>Reverted: version {} was written with the content of version {}.</source>
        <translation>已恢复：写入了版本 {}，内容来自版本 {}。</translation>
    </message>
    <message>
        <source>Not reverted: {}</source>
        <translation>未恢复：{}</translation>
    </message>
    <message>
        <source>Adopted: version {} written.</source>
        <translation>已采纳：已写入版本 {}。</translation>
    </message>
    <message>
        <source>Proposal rejected.</source>
        <translation>已拒绝提议。</translation>
    </message>
    <message>
        <source>Not adopted: the agent changed this proposal since it was shown; its new text is shown once loaded. Look again.</source>
        <translation>未采纳：显示之后，代理又修改了这条提议；载入后会显示它的新内容。请重新查看。</translation>
    </message>
    <message>
        <source>Not adopted: {} changed since this proposal was made (it is now at version {}). Compare them in the Review queue, which can adopt it onto the current version, or reject it here.</source>
        <translation>未采纳：提议之后 {} 已更改（现在是版本 {}）。请在审核队列中比较两者，那里可以把它采纳到当前版本上；或在这里拒绝它。</translation>
    </message>
    <message>
        <source>Not done: {}</source>
        <translation>未完成：{}</translation>
    </message>
    <message>
        <source>Export {}</source>
        <translation>导出 {}</translation>
    </message>
    <message>
        <source>Markdown (*.md)</source>
        <translation>Markdown (*.md)</translation>
    </message>
    <message>
        <source>Exported to {}.</source>
        <translation>已导出到 {}。</translation>
    </message>
    <message>
        <source>Not exported: {}</source>
        <translation>未导出：{}</translation>
    </message>
</context>
<context>
    <name>Knob</name>
    <message>
        <source>SQLite durability. NORMAL (with WAL) survives a killed or crashed Cairn without losing an acknowledged write; an OS crash or power loss may roll back the last commits. FULL also survives power loss and is several times slower on writes.</source>
        <translation>SQLite 的持久性级别。NORMAL（配合 WAL）在 Cairn 被终止或崩溃时不会丢失已确认的写入；操作系统崩溃或断电可能回滚最近的几次提交。FULL 在断电时也不会丢失，但写入要慢好几倍。</translation>
    </message>
    <message>
        <source>How long a database connection waits for a lock before reporting the store busy.</source>
        <translation>数据库连接等待锁的时长，超时后报告存储繁忙。</translation>
    </message>
    <message>
        <source>Run SQLite&apos;s quick_check when the store opens, and refuse to start on a damaged file.</source>
        <translation>打开存储时运行 SQLite 的 quick_check，文件损坏时拒绝启动。</translation>
    </message>
    <message>
        <source>Largest memory content accepted, in UTF-8 bytes. Larger writes are refused, never cut.</source>
        <translation>可接受的记忆内容的最大长度，以 UTF-8 字节计。超长的写入会被拒绝，绝不截断。</translation>
    </message>
    <message>
        <source>Largest summary accepted, in UTF-8 bytes.</source>
        <translation>可接受的摘要的最大长度，以 UTF-8 字节计。</translation>
    </message>
    <message>
        <source>Largest `keywords` enrichment text accepted, in UTF-8 bytes.</source>
        <translation>可接受的 `keywords` 补充文本的最大长度，以 UTF-8 字节计。</translation>
    </message>
    <message>
        <source>Most tags one memory may carry.</source>
        <translation>一条记忆最多可带的标签数。</translation>
    </message>
    <message>
        <source>Longest tag accepted, in characters.</source>
        <translation>可接受的标签的最大长度，以字符计。</translation>
    </message>
    <message>
        <source>Longest free-form provenance `source` string accepted, in characters.</source>
        <translation>可接受的自由格式来源字符串 `source` 的最大长度，以字符计。</translation>
    </message>
    <message>
        <source>Kinds of memory to accept beyond the built-in ones (fact, preference, convention, procedure, pitfall, correction, insight, idea). Lowercase words.</source>
        <translation>除内置类型（fact、preference、convention、procedure、pitfall、correction、insight、idea）之外还接受的记忆类型。使用小写单词。</translation>
    </message>
    <message>
        <source>Let agent connections search every workspace when they ask explicitly (horizon &apos;all&apos;). Off: an agent only ever sees its own workspace, user and global memories.</source>
        <translation>允许智能体连接在明确要求时（horizon &apos;all&apos;）搜索所有工作区。关闭时，智能体只能看到自己工作区的记忆、用户记忆和全局记忆。</translation>
    </message>
    <message>
        <source>Default byte budget of a context bundle when the caller gives none.</source>
        <translation>调用方未指定时，上下文包的默认字节预算。</translation>
    </message>
    <message>
        <source>Author tiers a context bundle takes by default (human, explicit, derived, llm).</source>
        <translation>上下文包默认采用的作者层级（human、explicit、derived、llm）。</translation>
    </message>
    <message>
        <source>Largest request frame (one line of JSON) accepted, in bytes; a larger one is answered with an error and the connection closed.</source>
        <translation>可接受的请求帧（一行 JSON）的最大字节数；更大的帧会收到错误答复，连接随即关闭。</translation>
    </message>
    <message>
        <source>Seconds a client has to finish a frame it started, and to take any of its answers once its socket is full; a slower one is disconnected.</source>
        <translation>客户端完成已开始的帧、以及在其套接字已满时取走答复的时限（秒）；更慢的客户端会被断开。</translation>
    </message>
    <message>
        <source>Seconds a connection may stay silent before it is closed.</source>
        <translation>连接保持静默多少秒后被关闭。</translation>
    </message>
    <message>
        <source>Seconds a new connection has to send its hello (with its token on TCP).</source>
        <translation>新连接发送 hello（在 TCP 上须附带令牌）的时限（秒）。</translation>
    </message>
    <message>
        <source>Most connections served at once; more are refused with an error.</source>
        <translation>同时服务的最大连接数；超出的连接会被拒绝并收到错误。</translation>
    </message>
    <message>
        <source>Most loopback TCP connections waiting for their hello at once; more are refused. They do not count against server.max_connections, so they never take the Unix socket&apos;s.</source>
        <translation>同时等待 hello 的本机回环 TCP 连接的最大数量；超出的会被拒绝。它们不计入 server.max_connections，因此不会占用 Unix 套接字的连接名额。</translation>
    </message>
    <message>
        <source>Most requests one connection may have in flight; more are refused (rate_limited).</source>
        <translation>单个连接同时处理中的最大请求数；超出的请求会被拒绝（rate_limited）。</translation>
    </message>
    <message>
        <source>Most bytes of pushed `changes` a subscriber may leave unread; past it the connection is unsubscribed and told where to catch up from with changes.since.</source>
        <translation>订阅者可积压未读的推送 `changes` 的最大字节数；超过后连接会被取消订阅，并被告知从何处用 changes.since 补齐。</translation>
    </message>
    <message>
        <source>Threads that run service calls for the socket server.</source>
        <translation>为套接字服务器执行服务调用的线程数。</translation>
    </message>
    <message>
        <source>Threads that run searches and context bundles. Search scoring is CPU-bound Python, so on CPython extra threads mostly contend for the interpreter lock: on 2 CPUs, 8 threads served fewer searches per second than 1 (see docs/performance.md).</source>
        <translation>执行搜索和上下文包的线程数。搜索打分是受 CPU 限制的 Python 代码，在 CPython 上多开的线程大多在争抢解释器锁：在 2 个 CPU 上，8 个线程每秒完成的搜索比 1 个线程还少（见 docs/performance.md）。</translation>
    </message>
    <message>
        <source>Also listen on loopback TCP (127.0.0.1 and ::1) at this port, with tokens required; 0 is off. Never binds another address.</source>
        <translation>另外在此端口监听本机回环 TCP（127.0.0.1 和 ::1），并要求令牌；0 表示关闭。绝不绑定其他地址。</translation>
    </message>
    <message>
        <source>Refuse agent connections on the Unix socket that present no token. TCP always requires one.</source>
        <translation>拒绝 Unix 套接字上未出示令牌的智能体连接。TCP 始终要求令牌。</translation>
    </message>
    <message>
        <source>While the tray runs, ask in the tray about every person&apos;s command, also those typed at a terminal (a program that fakes a terminal then still needs your click).</source>
        <translation>托盘运行期间，代表你执行的每条命令都在托盘中询问你，包括在终端中输入的命令（这样伪装成终端的程序仍然需要你点击确认）。</translation>
    </message>
    <message>
        <source>Proposals the review queue holds. Beyond this the least-seen, longest-unseen go; each eviction is recorded and counted in health, never silent.</source>
        <translation>审核队列可容纳的提议数。超出时，出现次数最少、最久未出现的提议会被移出；每次移出都会被记录并计入健康状况，绝不悄无声息。</translation>
    </message>
    <message>
        <source>Audit events kept in the database. Past this, the oldest are rotated into JSON-lines files under the state directory (the export format) until 90% remain, so a store nobody writes to makes no new files - never dropped.</source>
        <translation>数据库中保留的审计事件数。超过此数时，最旧的事件会被轮转到状态目录下的 JSON Lines 文件中（即导出格式），直到剩下 90%，因此没有人写入的存储不会再产生新文件——绝不丢弃。</translation>
    </message>
    <message>
        <source>Days an expired memory is kept (hidden, shown on request) before it is purged.</source>
        <translation>过期的记忆在被清除之前保留的天数（期间隐藏，可按需显示）。</translation>
    </message>
    <message>
        <source>Days a project memory may go unused (not recalled, not changed) before the janitor archives it; 0 turns this off. Pinned memories are never archived, and importance 4 and 5 get twice as long. Archived memories stay searchable on request; nothing is deleted.</source>
        <translation>项目记忆连续多少天未被使用（未被调用、未被修改）后由清理任务归档；0 表示关闭。置顶的记忆永不归档，重要性为 4 和 5 的记忆期限加倍。已归档的记忆仍可按需搜索；不会删除任何内容。</translation>
    </message>
    <message>
        <source>Days after a session was last seen before its session-scope memories expire (and, after lifecycle.expired_retention_days, are purged); 0 turns this off.</source>
        <translation>会话最近一次出现后，再过多少天其会话范围的记忆过期（再经过 lifecycle.expired_retention_days 后被清除）；0 表示关闭。</translation>
    </message>
    <message>
        <source>Hours between automatic online backups while Cairn runs; 0 turns them off. A backup is also taken before any schema migration.</source>
        <translation>Cairn 运行期间两次自动在线备份之间的小时数；0 表示关闭。每次数据库结构迁移之前也会备份。</translation>
    </message>
    <message>
        <source>Daily backups kept (the newest of each day).</source>
        <translation>保留的每日备份数（每天保留最新的一份）。</translation>
    </message>
    <message>
        <source>Weekly backups kept beyond the daily ones (the newest of each ISO week).</source>
        <translation>在每日备份之外保留的每周备份数（每个 ISO 周保留最新的一份）。</translation>
    </message>
    <message>
        <source>Largest identity document version accepted, in UTF-8 bytes (each document is injected into agents&apos; prompts, so it stays small).</source>
        <translation>可接受的身份文档版本的最大长度，以 UTF-8 字节计（每份文档都会注入智能体的提示词，所以要保持精简）。</translation>
    </message>
    <message>
        <source>A folder of your markdown notes to keep as memories (each file one human memory, updated when the file changes, archived when it is deleted); empty turns it off.</source>
        <translation>要作为记忆保存的 Markdown 笔记所在的文件夹（每个文件对应一条人写的记忆，文件修改时随之更新，文件删除时归档）；留空表示关闭。</translation>
    </message>
    <message>
        <source>Kind of a note&apos;s memory when its front matter names none.</source>
        <translation>笔记的 front matter 未指定类型时，其记忆使用的类型。</translation>
    </message>
    <message>
        <source>Scope of a note&apos;s memory when its front matter names none (global or user).</source>
        <translation>笔记的 front matter 未指定范围时，其记忆使用的范围（global 或 user）。</translation>
    </message>
    <message>
        <source>How often recall counts and last-recalled times are written, in one batch, off the request path.</source>
        <translation>调用次数和最近调用时间多久写入一次；在请求处理之外一次批量写入。</translation>
    </message>
    <message>
        <source>How long a write&apos;s idempotency key is remembered, so a retry returns the first result.</source>
        <translation>写入的幂等键保留多长时间，以便重试时返回第一次的结果。</translation>
    </message>
</context>
<context>
    <name>MemoriesWindow</name>
    <message>
        <source>Cairn — Memories</source>
        <translation>Cairn — 记忆</translation>
    </message>
    <message>
        <source>Search memories (Ctrl+F)</source>
        <translation>搜索记忆（Ctrl+F）</translation>
    </message>
    <message>
        <source>Searches as you type with the agents&apos; engine; your searches do not count as use.</source>
        <translation>输入即搜索，使用与智能体相同的引擎；你的搜索不计入使用次数。</translation>
    </message>
    <message>
        <source>Scope</source>
        <translation>范围</translation>
    </message>
    <message>
        <source>Any scope</source>
        <translation>任意范围</translation>
    </message>
    <message>
        <source>Workspace</source>
        <translation>工作区</translation>
    </message>
    <message>
        <source>Any workspace</source>
        <translation>任意工作区</translation>
    </message>
    <message>
        <source>Kind</source>
        <translation>类型</translation>
    </message>
    <message>
        <source>Any kind</source>
        <translation>任意类型</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>Active and archived</source>
        <translation>活动和已归档</translation>
    </message>
    <message>
        <source>Active and archived, with expired</source>
        <translation>活动和已归档（含已过期）</translation>
    </message>
    <message>
        <source>Every status</source>
        <translation>所有状态</translation>
    </message>
    <message>
        <source>Tier</source>
        <translation>层级</translation>
    </message>
    <message>
        <source>Any tier</source>
        <translation>任意层级</translation>
    </message>
    <message>
        <source>Agent</source>
        <translation>智能体</translation>
    </message>
    <message>
        <source>Any agent</source>
        <translation>任意智能体</translation>
    </message>
    <message>
        <source>Loading…</source>
        <translation>正在加载…</translation>
    </message>
    <message numerus="yes">
        <source>The best %n results; more may match: refine the search</source>
        <translation>
            <numerusform>最相关的 %n 条结果；可能还有更多匹配：请细化搜索</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n results</source>
        <translation>
            <numerusform>%n 条结果</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n memories shown; scroll down for more</source>
        <translation>
            <numerusform>已显示 %n 条记忆；向下滚动查看更多</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n memories</source>
        <translation>
            <numerusform>%n 条记忆</numerusform>
        </translation>
    </message>
    <message>
        <source>Forget this memory?</source>
        <translation>遗忘这条记忆？</translation>
    </message>
    <message>
        <source>Forget “{}” for good?</source>
        <translation>永久遗忘“{}”？</translation>
    </message>
    <message>
        <source>Its words are erased from every revision, from the search index and from the audit log. Only a tombstone stays - its id, a hash of the text, who forgot it and when - so no agent can write it back. This cannot be undone.</source>
        <translation>它的文字将从每个修订版本、搜索索引和审计日志中抹除。只留下一块“墓碑”——它的 id、文本的哈希值、由谁在何时遗忘——这样任何智能体都无法把它写回来。此操作无法撤销。</translation>
    </message>
    <message>
        <source>Forget</source>
        <translation>遗忘</translation>
    </message>
</context>
<context>
    <name>MemoryEditor</name>
    <message>
        <source>Edit memory</source>
        <translation>编辑记忆</translation>
    </message>
    <message>
        <source>Separate tags with commas.</source>
        <translation>用逗号分隔各个标签。</translation>
    </message>
    <message>
        <source>Why (optional, kept in the history)</source>
        <translation>原因（可选，会保存在历史中）</translation>
    </message>
    <message>
        <source>Content</source>
        <translation>内容</translation>
    </message>
    <message>
        <source>Summary</source>
        <translation>摘要</translation>
    </message>
    <message>
        <source>Tags</source>
        <translation>标签</translation>
    </message>
    <message>
        <source>Importance</source>
        <translation>重要性</translation>
    </message>
    <message>
        <source>Kind</source>
        <translation>类型</translation>
    </message>
    <message>
        <source>Reason</source>
        <translation>原因</translation>
    </message>
    <message>
        <source>Discard your changes?</source>
        <translation>放弃你的修改？</translation>
    </message>
    <message>
        <source>Closing the editor loses what you changed in this memory.</source>
        <translation>关闭编辑器会丢失你对这条记忆所做的修改。</translation>
    </message>
    <message>
        <source>Discard them</source>
        <translation>放弃修改</translation>
    </message>
    <message>
        <source>This memory changed while you were editing (it is now revision {}). Saving will be refused: copy your text, close, and edit again.</source>
        <translation>这条记忆在你编辑期间已被修改（现在是修订版本 {}）。保存将被拒绝：请复制你的文本，关闭后重新编辑。</translation>
    </message>
    <message>
        <source>Nothing has changed.</source>
        <translation>没有任何更改。</translation>
    </message>
</context>
<context>
    <name>MemoryTableModel</name>
    <message>
        <source>Memory</source>
        <translation>记忆</translation>
    </message>
    <message>
        <source>Kind</source>
        <translation>类型</translation>
    </message>
    <message>
        <source>Scope</source>
        <translation>范围</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>Tier</source>
        <translation>层级</translation>
    </message>
    <message>
        <source>Agent</source>
        <translation>智能体</translation>
    </message>
    <message>
        <source>Importance</source>
        <translation>重要性</translation>
    </message>
    <message>
        <source>Updated</source>
        <translation>更新时间</translation>
    </message>
    <message>
        <source>Flagged: {}</source>
        <translation>已标记：{}</translation>
    </message>
    <message>
        <source>{}, expired</source>
        <translation>{}，已过期</translation>
    </message>
</context>
<context>
    <name>PersonCheck</name>
    <message>
        <source>Cairn: act for you?</source>
        <translation>Cairn：代表你操作？</translation>
    </message>
    <message>
        <source>A program asks to act for you in Cairn.</source>
        <translation>有一个程序请求在 Cairn 中代表你操作。</translation>
    </message>
    <message>
        <source>It could adopt or reject proposals, change the capture policy or your agents, and see what only you may see. Allow it only if you started it yourself.</source>
        <translation>它可以采纳或拒绝提议、更改采集策略或你的代理，并查看只有你能看到的内容。只有当它是你自己启动的时候才允许。</translation>
    </message>
    <message>
        <source>(unknown)</source>
        <translation>（未知）</translation>
    </message>
    <message>
        <source>Command:</source>
        <translation>命令：</translation>
    </message>
    <message>
        <source>Started by:</source>
        <translation>启动者：</translation>
    </message>
    <message>
        <source>Process:</source>
        <translation>进程：</translation>
    </message>
    <message>
        <source>Allow once</source>
        <translation>允许一次</translation>
    </message>
    <message>
        <source>Refuse</source>
        <translation>拒绝</translation>
    </message>
</context>
<context>
    <name>PolicyWindow</name>
    <message>
        <source>Cairn — Capture policy</source>
        <translation>Cairn — 记录策略</translation>
    </message>
    <message>
        <source>&amp;Pause all capture</source>
        <translation>暂停所有记录(&amp;P)</translation>
    </message>
    <message>
        <source>While paused, every agent write is refused; your own writes still land.</source>
        <translation>暂停期间，智能体的每次写入都会被拒绝；你自己的写入仍会保存。</translation>
    </message>
    <message>
        <source>auto: an agent&apos;s write lands at once.
ask: it waits in the review queue for you.
off: it is refused; nothing is stored.
The strictest rule that applies wins.</source>
        <translation>自动：智能体的写入立即保存。
询问：写入在审核队列中等待你处理。
关闭：写入被拒绝，不存储任何内容。
多条规则同时适用时，以最严格的为准。</translation>
    </message>
    <message>
        <source>Kinds of memory</source>
        <translation>记忆类型</translation>
    </message>
    <message>
        <source>Scope and origin</source>
        <translation>范围与来源</translation>
    </message>
    <message>
        <source>Global memories</source>
        <translation>全局记忆</translation>
    </message>
    <message>
        <source>A global memory reaches every project you work on.</source>
        <translation>全局记忆作用于你参与的每个项目。</translation>
    </message>
    <message>
        <source>User memories</source>
        <translation>用户记忆</translation>
    </message>
    <message>
        <source>A user memory is about you, everywhere.</source>
        <translation>用户记忆是关于你本人的，在任何地方都适用。</translation>
    </message>
    <message>
        <source>Extracted by a model</source>
        <translation>由模型提取</translation>
    </message>
    <message>
        <source>Memories a model extracted on its own rather than was asked to keep.</source>
        <translation>模型自行提取的记忆，而不是被要求保存的记忆。</translation>
    </message>
    <message>
        <source>Other kinds</source>
        <translation>其他类型</translation>
    </message>
    <message>
        <source>Kinds added in settings that are not listed above.</source>
        <translation>在设置中添加、未在上方列出的类型。</translation>
    </message>
    <message>
        <source>Per-agent overrides. A looser one applies only while the agent shows its token; a stricter one always applies.</source>
        <translation>按智能体覆盖。较宽松的规则仅在该智能体出示令牌时生效；较严格的规则始终生效。</translation>
    </message>
    <message>
        <source>Agent</source>
        <translation>智能体</translation>
    </message>
    <message>
        <source>Kind or scope</source>
        <translation>类型或范围</translation>
    </message>
    <message>
        <source>Mode</source>
        <translation>模式</translation>
    </message>
    <message>
        <source>The agent&apos;s name, as it connects.</source>
        <translation>智能体连接时使用的名称。</translation>
    </message>
    <message>
        <source>agent name</source>
        <translation>智能体名称</translation>
    </message>
    <message>
        <source>What the override is about.</source>
        <translation>此覆盖规则针对的对象。</translation>
    </message>
    <message>
        <source>The override&apos;s mode.</source>
        <translation>此覆盖规则的模式。</translation>
    </message>
    <message>
        <source>&amp;Add</source>
        <translation>添加(&amp;A)</translation>
    </message>
    <message>
        <source>&amp;Remove</source>
        <translation>移除(&amp;R)</translation>
    </message>
    <message>
        <source>&amp;Open file</source>
        <translation>打开文件(&amp;O)</translation>
    </message>
    <message>
        <source>Add or change this override.</source>
        <translation>添加或修改此覆盖规则。</translation>
    </message>
    <message>
        <source>Remove the selected overrides (Delete).</source>
        <translation>移除选中的覆盖规则（Delete）。</translation>
    </message>
    <message>
        <source>Per-agent overrides</source>
        <translation>按智能体覆盖</translation>
    </message>
    <message>
        <source>The policy file.</source>
        <translation>策略文件。</translation>
    </message>
    <message>
        <source>Open the policy file in your editor; Cairn applies a saved edit at once.</source>
        <translation>在编辑器中打开策略文件；保存后 Cairn 会立即应用修改。</translation>
    </message>
    <message>
        <source>Policy file</source>
        <translation>策略文件</translation>
    </message>
    <message>
        <source>The policy file has an error and was not applied: {}. The policy below is the last valid one, still in effect.</source>
        <translation>策略文件有错误，未被应用：{}。下方显示的是最后一个有效的策略，目前仍在生效。</translation>
    </message>
    <message>
        <source>kind: {}</source>
        <translation>类型：{}</translation>
    </message>
    <message>
        <source>scope: {}</source>
        <translation>范围：{}</translation>
    </message>
    <message>
        <source>extracted by a model</source>
        <translation>由模型提取</translation>
    </message>
    <message>
        <source>An agent&apos;s write lands at once.</source>
        <translation>智能体的写入立即保存。</translation>
    </message>
    <message>
        <source>It waits in the review queue for you.</source>
        <translation>写入在审核队列中等待你处理。</translation>
    </message>
    <message>
        <source>It is refused; nothing is stored.</source>
        <translation>写入被拒绝，不存储任何内容。</translation>
    </message>
    <message>
        <source>auto</source>
        <translation>自动</translation>
    </message>
    <message>
        <source>ask</source>
        <translation>询问</translation>
    </message>
    <message>
        <source>off</source>
        <translation>关闭</translation>
    </message>
</context>
<context>
    <name>Presenter</name>
    <message>
        <source>Something went wrong inside Cairn. Your memories are safe.</source>
        <translation>Cairn 内部出了问题。你的记忆是安全的。</translation>
    </message>
    <message>
        <source>Cairn</source>
        <translation>Cairn</translation>
    </message>
</context>
<context>
    <name>QuitGuard</name>
    <message>
        <source>Quit Cairn?</source>
        <translation>退出 Cairn？</translation>
    </message>
    <message>
        <source>Quitting closes every window. Unsaved edits in {} would be lost.</source>
        <translation>退出会关闭所有窗口。{} 中未保存的编辑将会丢失。</translation>
    </message>
    <message>
        <source>Quit and lose them</source>
        <translation>退出并丢弃编辑</translation>
    </message>
</context>
<context>
    <name>RevertDialog</name>
    <message>
        <source>Revert {}</source>
        <translation>恢复 {}</translation>
    </message>
    <message>
        <source>A new version {} will be written with the content of version {}; nothing is deleted. Below: what changes from the current version {} (red: removed, green: added).</source>
        <translation>将写入新版本 {}，内容来自版本 {}；不会删除任何内容。下方是相对当前版本 {} 的变化（红色：删除，绿色：新增）。</translation>
    </message>
    <message>
        <source>Write version {}</source>
        <translation>写入版本 {}</translation>
    </message>
</context>
<context>
    <name>ReviewWindow</name>
    <message>
        <source>Cairn — Review queue</source>
        <translation>Cairn — 审核队列</translation>
    </message>
    <message>
        <source>E</source>
        <translation>E</translation>
    </message>
    <message>
        <source>Show proposals of one agent</source>
        <translation>只显示某个智能体的提议</translation>
    </message>
    <message>
        <source>Show proposals of one kind</source>
        <translation>只显示某种类型的提议</translation>
    </message>
    <message>
        <source>Show proposals waiting for one reason</source>
        <translation>只显示因某个原因等待的提议</translation>
    </message>
    <message>
        <source>Agent:</source>
        <translation>智能体：</translation>
    </message>
    <message>
        <source>Kind:</source>
        <translation>类型：</translation>
    </message>
    <message>
        <source>Why:</source>
        <translation>原因：</translation>
    </message>
    <message>
        <source>Agent</source>
        <translation>智能体</translation>
    </message>
    <message>
        <source>Proposal</source>
        <translation>提议</translation>
    </message>
    <message>
        <source>Scope</source>
        <translation>范围</translation>
    </message>
    <message>
        <source>Hits</source>
        <translation>次数</translation>
    </message>
    <message>
        <source>First seen</source>
        <translation>首次出现</translation>
    </message>
    <message>
        <source>Last seen</source>
        <translation>最近出现</translation>
    </message>
    <message>
        <source>Why it waits</source>
        <translation>等待原因</translation>
    </message>
    <message>
        <source>Up/Down to move, A to adopt, E to edit, R to reject; Shift or Ctrl to select many</source>
        <translation>上/下方向键移动，A 采纳，E 编辑，R 拒绝；按住 Shift 或 Ctrl 可多选</translation>
    </message>
    <message>
        <source>Red: removed by the proposal. Green: added by it.</source>
        <translation>红色：提议删除的内容。绿色：提议新增的内容。</translation>
    </message>
    <message>
        <source>Adopt onto the current &amp;version</source>
        <translation>采纳到当前版本上(&amp;V)</translation>
    </message>
    <message>
        <source>The agent says this memory is wrong or stale: what adopting does</source>
        <translation>智能体认为这条记忆有误或已过时：采纳后要执行的操作</translation>
    </message>
    <message>
        <source>Archive the memory</source>
        <translation>归档这条记忆</translation>
    </message>
    <message>
        <source>Forget the memory</source>
        <translation>遗忘这条记忆</translation>
    </message>
    <message>
        <source>Edit the memory</source>
        <translation>编辑这条记忆</translation>
    </message>
    <message>
        <source>comma, separated</source>
        <translation>用逗号分隔</translation>
    </message>
    <message>
        <source>1 to 5</source>
        <translation>1 到 5</translation>
    </message>
    <message>
        <source>Set by the proposal; adopting makes it. It cannot be edited here: reject the proposal if you do not want it</source>
        <translation>由提议设定；采纳即生效。此处不能修改：如不想要，请拒绝该提议</translation>
    </message>
    <message>
        <source>The scanner lets this finding through everywhere from now on (secrets are never allowed); the policy window lists what is allowed</source>
        <translation>今后扫描器在所有地方都放行此结果（机密永远不会被放行）；策略窗口列出了已放行的内容</translation>
    </message>
    <message>
        <source>On adopting</source>
        <translation>采纳时</translation>
    </message>
    <message>
        <source>Content</source>
        <translation>内容</translation>
    </message>
    <message>
        <source>Summary</source>
        <translation>摘要</translation>
    </message>
    <message>
        <source>Kind</source>
        <translation>类型</translation>
    </message>
    <message>
        <source>Tags</source>
        <translation>标签</translation>
    </message>
    <message>
        <source>Importance</source>
        <translation>重要性</translation>
    </message>
    <message>
        <source>Expiry</source>
        <translation>过期时间</translation>
    </message>
    <message>
        <source>Pinned</source>
        <translation>置顶</translation>
    </message>
    <message>
        <source>Importance cannot be empty: give a whole number from 1 to 5.</source>
        <translation>重要性不能为空：请填写 1 到 5 之间的整数。</translation>
    </message>
    <message>
        <source>Change the memory to edit it, or choose another action.</source>
        <translation>请修改记忆内容以进行编辑，或选择其他操作。</translation>
    </message>
    <message>
        <source>You have compared them: adopt the proposal over what the memory is now</source>
        <translation>你已比较过两者：将提议采纳到这条记忆的当前内容之上</translation>
    </message>
    <message>
        <source>Also allo&amp;w this finding from now on</source>
        <translation>今后也放行此扫描结果(&amp;W)</translation>
    </message>
    <message>
        <source>Reason for rejecting (optional)</source>
        <translation>拒绝原因（可选）</translation>
    </message>
    <message>
        <source>&amp;Adopt</source>
        <translation>采纳(&amp;A)</translation>
    </message>
    <message>
        <source>A</source>
        <translation>A</translation>
    </message>
    <message>
        <source>&amp;Reject</source>
        <translation>拒绝(&amp;R)</translation>
    </message>
    <message>
        <source>R</source>
        <translation>R</translation>
    </message>
    <message>
        <source>All</source>
        <translation>全部</translation>
    </message>
    <message>
        <source>Shortcut: {}</source>
        <translation>快捷键：{}</translation>
    </message>
    <message>
        <source>{} of {} waiting</source>
        <translation>显示 {} 条，共 {} 条待审核</translation>
    </message>
    <message>
        <source>The proposal you were editing was decided elsewhere or is gone.</source>
        <translation>你正在编辑的提议已在别处处理，或已不存在。</translation>
    </message>
    <message>
        <source>Flagged by the scanner: {}</source>
        <translation>被扫描器标记：{}</translation>
    </message>
    <message>
        <source>Nothing selected.</source>
        <translation>未选择任何内容。</translation>
    </message>
    <message>
        <source>{} (unverified)</source>
        <translation>{}（未验证）</translation>
    </message>
    <message>
        <source>{} proposes a new version of {}</source>
        <translation>{} 提议 {} 的新版本</translation>
    </message>
    <message>
        <source>{} proposes a new memory</source>
        <translation>{} 提议一条新记忆</translation>
    </message>
    <message>
        <source>{} proposes to update memory {}</source>
        <translation>{} 提议修改记忆 {}</translation>
    </message>
    <message>
        <source>{} proposes to supersede memory {}</source>
        <translation>{} 提议用新记忆取代记忆 {}</translation>
    </message>
    <message>
        <source>{} proposes to forget memory {}</source>
        <translation>{} 提议遗忘记忆 {}</translation>
    </message>
    <message>
        <source>{} says memory {} is wrong</source>
        <translation>{} 认为记忆 {} 有误</translation>
    </message>
    <message>
        <source>{} says memory {} is stale</source>
        <translation>{} 认为记忆 {} 已过时</translation>
    </message>
    <message>
        <source>{} proposes to {} memory {}</source>
        <translation>{} 提议执行“{}”：记忆 {}</translation>
    </message>
    <message>
        <source>Waits because: {}</source>
        <translation>等待原因：{}</translation>
    </message>
    <message>
        <source>⚑ Flagged by the scanner: {}</source>
        <translation>⚑ 被扫描器标记：{}</translation>
    </message>
    <message>
        <source>The agent&apos;s note: {}</source>
        <translation>智能体的备注：{}</translation>
    </message>
    <message>
        <source>Rejected before, because: {}</source>
        <translation>之前曾被拒绝，原因：{}</translation>
    </message>
    <message>
        <source>Expires: {}</source>
        <translation>到期：{}</translation>
    </message>
    <message>
        <source>Adopting archives the memory.</source>
        <translation>采纳后将归档这条记忆。</translation>
    </message>
    <message>
        <source>Adopting stores your edits as a new revision.</source>
        <translation>采纳后将把你的编辑保存为新的修订版本。</translation>
    </message>
    <message>
        <source>Adopting forgets the memory.</source>
        <translation>采纳后将遗忘这条记忆。</translation>
    </message>
    <message>
        <source>Adopt &amp;selected</source>
        <translation>采纳所选(&amp;S)</translation>
    </message>
    <message>
        <source>Reject se&amp;lected</source>
        <translation>拒绝所选(&amp;L)</translation>
    </message>
    <message>
        <source> (the {} most seen of the {} that match are listed)</source>
        <translation>（列出符合条件的 {1} 条中出现次数最多的 {0} 条）</translation>
    </message>
    <message>
        <source> (the {} most seen are listed)</source>
        <translation>（列出出现次数最多的 {} 条）</translation>
    </message>
    <message>
        <source>The content cannot be empty.</source>
        <translation>内容不能为空。</translation>
    </message>
    <message>
        <source>The tag “{}” is longer than {} characters.</source>
        <translation>标签“{}”超过了 {} 个字符。</translation>
    </message>
    <message>
        <source>There are {} tags; at most {} are allowed.</source>
        <translation>共有 {} 个标签；最多允许 {} 个。</translation>
    </message>
    <message>
        <source>Importance must be a whole number from 1 to 5.</source>
        <translation>重要性必须是 1 到 5 之间的整数。</translation>
    </message>
    <message>
        <source>Adopting…</source>
        <translation>正在采纳…</translation>
    </message>
    <message>
        <source>Adopted with your edits ({}): {}</source>
        <translation>已按你的编辑采纳（{}）：{}</translation>
    </message>
    <message>
        <source>Adopted: {}</source>
        <translation>已采纳：{}</translation>
    </message>
    <message>
        <source>Adopting failed.</source>
        <translation>采纳失败。</translation>
    </message>
    <message>
        <source>Not adopted — the target changed since the proposal. {}</source>
        <translation>未采纳——提议之后目标已被修改。{}</translation>
    </message>
    <message>
        <source>Not adopted: the target changed.</source>
        <translation>未采纳：目标已被修改。</translation>
    </message>
    <message>
        <source>{} (field: {})</source>
        <translation>{}（字段：{}）</translation>
    </message>
    <message>
        <source>The list was not reloaded, so it shows the proposals as last read. Why: {}</source>
        <translation>列表未能重新加载，因此显示的是上次读取的提议。原因：{}</translation>
    </message>
    <message>
        <source>The agent changed this proposal; it now reads “{}”. Your edits are kept: adopt again to adopt your version over it.</source>
        <translation>代理修改了这条提议，现在的内容是“{}”。你的编辑已保留：再次采纳即可用你的版本替代它。</translation>
    </message>
    <message>
        <source>Nothing was forgotten: the proposal you confirmed was decided elsewhere.</source>
        <translation>没有遗忘任何内容：你确认的那条提议已在别处处理。</translation>
    </message>
    <message>
        <source>Not adopted: the agent changed this proposal since it was shown. Your edits are kept; its new text follows here once loaded.</source>
        <translation>未采纳：显示之后，代理又修改了这条提议。你的编辑已保留；载入后会在这里显示它的新内容。</translation>
    </message>
    <message>
        <source>Not adopted: the agent changed this proposal since it was shown. Look again.</source>
        <translation>未采纳：显示之后，代理又修改了这条提议。请重新查看。</translation>
    </message>
    <message>
        <source>Not adopted.</source>
        <translation>未采纳。</translation>
    </message>
    <message>
        <source>Rejected.</source>
        <translation>已拒绝。</translation>
    </message>
    <message>
        <source>Not rejected.</source>
        <translation>未拒绝。</translation>
    </message>
    <message>
        <source>Not adopted: {} of the selected proposals hold your edits ({}). Adopt them one by one, or discard the edits first.</source>
        <translation>未采纳：所选提议中有 {} 条含有你的编辑（{}）。请逐条采纳，或先放弃这些编辑。</translation>
    </message>
    <message>
        <source>Adopted {} of {}.</source>
        <translation>已采纳 {} 条，共 {} 条。</translation>
    </message>
    <message>
        <source>Rejected {} of {}.</source>
        <translation>已拒绝 {} 条，共 {} 条。</translation>
    </message>
    <message>
        <source>Not done: {}</source>
        <translation>未完成：{}</translation>
    </message>
    <message>
        <source>Forget for good?</source>
        <translation>永久遗忘？</translation>
    </message>
    <message>
        <source>Adopting this forgets “{}” for good.</source>
        <translation>采纳后将永久遗忘“{}”。</translation>
    </message>
    <message>
        <source>Adopting forgets {} memories for good.</source>
        <translation>采纳后将永久遗忘 {} 条记忆。</translation>
    </message>
    <message>
        <source>Their words are erased from every revision, from the search index and from the audit log. This cannot be undone.</source>
        <translation>它们的文字将从每个修订版本、搜索索引和审计日志中抹去。此操作无法撤销。</translation>
    </message>
    <message>
        <source>Forget</source>
        <translation>遗忘</translation>
    </message>
    <message>
        <source>add</source>
        <translation>新增</translation>
    </message>
    <message>
        <source>update</source>
        <translation>修改</translation>
    </message>
    <message>
        <source>supersede</source>
        <translation>取代</translation>
    </message>
    <message>
        <source>forget</source>
        <translation>遗忘</translation>
    </message>
    <message>
        <source>feedback</source>
        <translation>反馈</translation>
    </message>
    <message>
        <source>identity</source>
        <translation>身份文档</translation>
    </message>
    <message>
        <source>policy</source>
        <translation>策略</translation>
    </message>
    <message>
        <source>scanner</source>
        <translation>扫描器</translation>
    </message>
    <message>
        <source>not_owner</source>
        <translation>不是该智能体的记忆</translation>
    </message>
    <message>
        <source>similar</source>
        <translation>与已有记忆相似</translation>
    </message>
    <message>
        <source>mass_forget</source>
        <translation>批量遗忘</translation>
    </message>
    <message>
        <source>extracted</source>
        <translation>由模型提取</translation>
    </message>
    <message>
        <source>ask</source>
        <translation>询问</translation>
    </message>
    <message>
        <source>a person&apos;s memory</source>
        <translation>由人写入</translation>
    </message>
    <message>
        <source>written by Cairn</source>
        <translation>由 Cairn 写入</translation>
    </message>
    <message>
        <source>an agent</source>
        <translation>某个智能体</translation>
    </message>
    <message>
        <source>identity documents change only with a person&apos;s say</source>
        <translation>只能由人决定是否修改</translation>
    </message>
    <message>
        <source>wrong</source>
        <translation>有误</translation>
    </message>
    <message>
        <source>stale</source>
        <translation>已过时</translation>
    </message>
    <message>
        <source>kind:{kind}</source>
        <translation>类型：{kind}</translation>
    </message>
    <message>
        <source>scope:{scope}</source>
        <translation>范围：{scope}</translation>
    </message>
    <message>
        <source>written by agent {agent}</source>
        <translation>由智能体 {agent} 写入</translation>
    </message>
    <message>
        <source>adopted by a person (proposed by {agent})</source>
        <translation>经人采纳，由 {agent} 提议</translation>
    </message>
    <message>
        <source>{n} of the {held} {scope} memories within an hour</source>
        <translation>一小时内遗忘 {scope} 范围 {held} 条记忆中的 {n} 条</translation>
    </message>
    <message>
        <source>{} ({})</source>
        <translation>{}（{}）</translation>
    </message>
    <message>
        <source>, </source>
        <translation>；</translation>
    </message>
    <message>
        <source>never expires</source>
        <translation>永不过期</translation>
    </message>
    <message>
        <source>expired {}</source>
        <translation>已于 {} 过期</translation>
    </message>
    <message>
        <source>expires {}</source>
        <translation>{} 过期</translation>
    </message>
    <message>
        <source>yes</source>
        <translation>是</translation>
    </message>
    <message>
        <source>no</source>
        <translation>否</translation>
    </message>
    <message>
        <source>{}: {}</source>
        <translation>{}：{}</translation>
    </message>
</context>
<context>
    <name>SettingsWindow</name>
    <message>
        <source>Cairn — Settings</source>
        <translation>Cairn — 设置</translation>
    </message>
    <message>
        <source>Where your data is</source>
        <translation>数据位置</translation>
    </message>
    <message>
        <source>Database</source>
        <translation>数据库</translation>
    </message>
    <message>
        <source>Settings and policy</source>
        <translation>设置与策略</translation>
    </message>
    <message>
        <source>Backups</source>
        <translation>备份</translation>
    </message>
    <message>
        <source>Copy</source>
        <translation>复制</translation>
    </message>
    <message>
        <source>Copy the path.</source>
        <translation>复制路径。</translation>
    </message>
    <message>
        <source>Notes folder</source>
        <translation>笔记文件夹</translation>
    </message>
    <message>
        <source>Off</source>
        <translation>未启用</translation>
    </message>
    <message>
        <source>Keep the markdown notes in a folder as memories.</source>
        <translation>把某个文件夹中的 Markdown 笔记保存为记忆。</translation>
    </message>
    <message>
        <source>Stop following the folder. Its notes&apos; memories stay as they are.</source>
        <translation>停止跟踪该文件夹。其笔记对应的记忆保持不变。</translation>
    </message>
    <message>
        <source> h</source>
        <translation> 小时</translation>
    </message>
    <message>
        <source>Back up every</source>
        <translation>备份间隔</translation>
    </message>
    <message>
        <source>Daily backups kept</source>
        <translation>保留的每日备份</translation>
    </message>
    <message>
        <source>Weekly backups kept</source>
        <translation>保留的每周备份</translation>
    </message>
    <message>
        <source>Copy the database now, into the backups folder.</source>
        <translation>立即把数据库复制到备份文件夹。</translation>
    </message>
    <message>
        <source>Backups, newest first.</source>
        <translation>备份列表，最新的在前。</translation>
    </message>
    <message>
        <source>Taken</source>
        <translation>备份时间</translation>
    </message>
    <message>
        <source>Why</source>
        <translation>原因</translation>
    </message>
    <message>
        <source>Size</source>
        <translation>大小</translation>
    </message>
    <message>
        <source>This computer</source>
        <translation>本机</translation>
    </message>
    <message>
        <source>The language of Cairn&apos;s windows and tray menu.</source>
        <translation>Cairn 窗口和托盘菜单使用的语言。</translation>
    </message>
    <message>
        <source>System</source>
        <translation>跟随系统</translation>
    </message>
    <message>
        <source>Start Cairn when I log in</source>
        <translation>登录时启动 Cairn</translation>
    </message>
    <message>
        <source>The tray starts with your desktop session, from this installation. Nothing starts or stops now. The same as `cairn autostart enable` and `disable`.</source>
        <translation>托盘程序随桌面会话启动，使用当前安装的 Cairn。此操作不会立即启动或停止任何程序。与 `cairn autostart enable` 和 `disable` 相同。</translation>
    </message>
    <message>
        <source>scheduled</source>
        <translation>定时</translation>
    </message>
    <message>
        <source>by you</source>
        <translation>由你</translation>
    </message>
    <message>
        <source>before an upgrade {}</source>
        <translation>升级之前 {}</translation>
    </message>
    <message>
        <source>The headless daemon starts when you log in too: whichever starts first holds your memories. Untick and tick the box to keep only the tray.</source>
        <translation>无界面守护进程也会在登录时启动：先启动的一方持有你的记忆。取消勾选再勾选，即可只保留托盘程序。</translation>
    </message>
    <message>
        <source>The headless daemon starts when you log in (`cairn autostart enable --headless`). Ticking the box starts the tray instead.</source>
        <translation>登录时启动的是无界面守护进程（`cairn autostart enable --headless`）。勾选此项将改为启动托盘程序。</translation>
    </message>
    <message>
        <source>Its entry (%1) starts another installation or version of Cairn. Untick and tick the box to start this one.</source>
        <translation>其启动项（%1）启动的是另一个安装或版本的 Cairn。取消勾选再勾选，即可改为启动当前这个。</translation>
    </message>
    <message>
        <source>Its entry: %1.</source>
        <translation>启动项：%1。</translation>
    </message>
    <message>
        <source>Cairn no longer starts when you log in. This one keeps running.</source>
        <translation>Cairn 不再在登录时启动。当前运行的 Cairn 会继续运行。</translation>
    </message>
    <message>
        <source>It takes effect at your next login.</source>
        <translation>下次登录时生效。</translation>
    </message>
    <message>
        <source>The headless daemon no longer starts when you log in: only one of the two can.</source>
        <translation>无界面守护进程不再在登录时启动：两者只能启用其一。</translation>
    </message>
    <message>
        <source>Change the language?</source>
        <translation>更改语言？</translation>
    </message>
    <message>
        <source>Changing the language reopens every window. Unsaved edits in {} would be lost.</source>
        <translation>更改语言会重新打开所有窗口。{} 中未保存的编辑将会丢失。</translation>
    </message>
    <message>
        <source>Change and lose them</source>
        <translation>更改并丢弃编辑</translation>
    </message>
    <message>
        <source>Ask me here about my commands typed at a terminal too</source>
        <translation>在终端中输入的我的命令也在这里询问我</translation>
    </message>
    <message>
        <source>Choose &amp;folder…</source>
        <translation>选择文件夹(&amp;F)…</translation>
    </message>
    <message>
        <source>&amp;Turn off</source>
        <translation>停用(&amp;T)</translation>
    </message>
    <message>
        <source>&amp;Back up now</source>
        <translation>立即备份(&amp;B)</translation>
    </message>
    <message>
        <source>Commands for you (adopting proposals, changing the policy or agents) run without a terminal are always asked about here. Ticked, those typed at a terminal are too, so a program that fakes a terminal still needs your click.</source>
        <translation>代表你执行的命令（采纳提议、更改策略或代理）在没有终端时运行，总会在这里询问你。勾选后，在终端中输入的命令也会询问，这样伪装成终端的程序仍然需要你点击确认。</translation>
    </message>
    <message>
        <source>Language</source>
        <translation>语言</translation>
    </message>
</context>
<context>
    <name>TokenDialog</name>
    <message>
        <source>Token for {}</source>
        <translation>{} 的令牌</translation>
    </message>
    <message>
        <source>The agent “{}” is registered. Give it this token (for example as CAIRN_TOKEN). Copy it now: Cairn will not show it again.</source>
        <translation>智能体“{}”已注册。请把这个令牌交给它（例如设为 CAIRN_TOKEN）。请现在就复制：Cairn 不会再次显示它。</translation>
    </message>
    <message>
        <source>&amp;Copy</source>
        <translation>复制(&amp;C)</translation>
    </message>
    <message>
        <source>Put the token on the clipboard</source>
        <translation>把令牌复制到剪贴板</translation>
    </message>
    <message>
        <source>Copied</source>
        <translation>已复制</translation>
    </message>
</context>
<context>
    <name>Tray</name>
    <message>
        <source>Review queue ({})</source>
        <translation>审核队列（{}）</translation>
    </message>
    <message>
        <source>Proposals from agents that wait for your decision</source>
        <translation>等待你决定的智能体提议</translation>
    </message>
    <message>
        <source>Memories</source>
        <translation>记忆</translation>
    </message>
    <message>
        <source>Identity</source>
        <translation>身份文档</translation>
    </message>
    <message>
        <source>Capture policy</source>
        <translation>记录策略</translation>
    </message>
    <message>
        <source>Pause all capture</source>
        <translation>暂停所有记录</translation>
    </message>
    <message>
        <source>While paused, Cairn refuses every agent&apos;s write</source>
        <translation>暂停期间，Cairn 会拒绝所有智能体的写入</translation>
    </message>
    <message>
        <source>Open the capture policy…</source>
        <translation>打开记录策略…</translation>
    </message>
    <message>
        <source>Agents</source>
        <translation>智能体</translation>
    </message>
    <message>
        <source>Health</source>
        <translation>健康状况</translation>
    </message>
    <message>
        <source>Export…</source>
        <translation>导出…</translation>
    </message>
    <message>
        <source>Export your memories to a file, or import an export</source>
        <translation>把记忆导出到文件，或导入已导出的文件</translation>
    </message>
    <message>
        <source>Settings</source>
        <translation>设置</translation>
    </message>
    <message>
        <source>Quit</source>
        <translation>退出</translation>
    </message>
    <message>
        <source>Stop Cairn: agents lose their connection until it starts again</source>
        <translation>停止 Cairn：在它再次启动之前，智能体将无法连接</translation>
    </message>
    <message>
        <source>Your desktop has no system tray, so Cairn opened its window. Cairn keeps running while a Cairn window is open; closing the last one quits Cairn.</source>
        <translation>你的桌面没有系统托盘，因此 Cairn 打开了它的窗口。只要还有 Cairn 窗口开着，Cairn 就会继续运行；关闭最后一个窗口即退出 Cairn。</translation>
    </message>
    <message>
        <source>Review queue</source>
        <translation>审核队列</translation>
    </message>
    <message>
        <source>Cairn — capture paused; nothing waiting</source>
        <translation>Cairn — 记录已暂停；没有待处理的提议</translation>
    </message>
    <message>
        <source>Cairn — capture paused; 1 proposal waiting for you</source>
        <translation>Cairn — 记录已暂停；1 条提议等待你处理</translation>
    </message>
    <message>
        <source>Cairn — capture paused; {} proposals waiting for you</source>
        <translation>Cairn — 记录已暂停；{} 条提议等待你处理</translation>
    </message>
    <message>
        <source>Cairn</source>
        <translation>Cairn</translation>
    </message>
    <message>
        <source>Cairn — nothing waiting</source>
        <translation>Cairn — 没有待处理的提议</translation>
    </message>
    <message>
        <source>Cairn — 1 proposal waiting for you</source>
        <translation>Cairn — 1 条提议等待你处理</translation>
    </message>
    <message>
        <source>Cairn — {} proposals waiting for you</source>
        <translation>Cairn — {} 条提议等待你处理</translation>
    </message>
    <message>
        <source>1 new proposal from {}</source>
        <translation>来自 {} 的 1 条新提议</translation>
    </message>
    <message>
        <source>{} new proposals from {}</source>
        <translation>{} 条新提议，来自 {}</translation>
    </message>
    <message>
        <source>{kind}: {mode}</source>
        <translation>{kind}：{mode}</translation>
    </message>
    <message>
        <source>auto</source>
        <translation>自动</translation>
    </message>
    <message>
        <source>ask</source>
        <translation>询问</translation>
    </message>
    <message>
        <source>off</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>An agent&apos;s {} is stored at once</source>
        <translation>智能体写入的 {} 立即保存</translation>
    </message>
    <message>
        <source>An agent&apos;s {} waits in the review queue for you</source>
        <translation>智能体写入的 {} 在审核队列中等待你处理</translation>
    </message>
    <message>
        <source>An agent&apos;s {} is refused</source>
        <translation>智能体写入的 {} 会被拒绝</translation>
    </message>
</context>
<context>
    <name>VersionsPane</name>
    <message>
        <source>Select one version to view it, two to compare them</source>
        <translation>选择一个版本即可查看，选择两个即可比较</translation>
    </message>
    <message>
        <source>Version</source>
        <translation>版本</translation>
    </message>
    <message>
        <source>Time</source>
        <translation>时间</translation>
    </message>
    <message>
        <source>Author</source>
        <translation>作者</translation>
    </message>
    <message>
        <source>Reason</source>
        <translation>原因</translation>
    </message>
    <message>
        <source>Versions agents proposed for this document</source>
        <translation>智能体为此文档提议的版本</translation>
    </message>
    <message>
        <source>&amp;Revert to this version…</source>
        <translation>恢复到此版本(&amp;R)…</translation>
    </message>
    <message>
        <source>&amp;Export with history…</source>
        <translation>连同历史导出(&amp;E)…</translation>
    </message>
    <message>
        <source>Nothing proposed for this document. When an agent proposes a new version of it, the proposal waits here for you.</source>
        <translation>这份文档还没有提议。智能体提议新版本时，提议会在这里等你决定。</translation>
    </message>
    <message>
        <source>&amp;Adopt proposal</source>
        <translation>采纳提议(&amp;A)</translation>
    </message>
    <message>
        <source>Re&amp;ject proposal</source>
        <translation>拒绝提议(&amp;J)</translation>
    </message>
    <message>
        <source>Select a version, two versions or a proposal to see it here.</source>
        <translation>选择一个版本、两个版本或一条提议，在这里查看。</translation>
    </message>
    <message>
        <source>&amp;Versions</source>
        <translation>版本(&amp;V)</translation>
    </message>
    <message>
        <source>&amp;Proposed by agents</source>
        <translation>智能体的提议(&amp;P)</translation>
    </message>
    <message>
        <source>{} ({})</source>
        <translation>{}（{}）</translation>
    </message>
    <message>
        <source>{}, on version {}: {}</source>
        <translation>{}，基于版本 {}：{}</translation>
    </message>
    <message>
        <source>{}, on version {}, proposed {} times: {}</source>
        <translation>{}，基于版本 {}，提议了 {} 次：{}</translation>
    </message>
    <message>
        <source>Version {}, by {}: {}</source>
        <translation>版本 {}，作者 {}：{}</translation>
    </message>
    <message>
        <source>Changes from version {} to version {} (red: removed, green: added)</source>
        <translation>从版本 {} 到版本 {} 的变化（红色：删除，绿色：新增）</translation>
    </message>
    <message>
        <source>Select one version to view or two to compare.</source>
        <translation>选择一个版本即可查看，或选择两个进行比较。</translation>
    </message>
    <message>
        <source>{} proposes (red: removed from the current version, green: added)</source>
        <translation>{} 的提议（红色：从当前版本删除，绿色：新增）</translation>
    </message>
</context>
</TS>
