/**
 * W5: the chart view's page script. It runs in the browser, sent there as its source text by
 * page.ts, so it is one self-contained function: it uses only the DOM and the replay functions
 * it is handed (`lib`), never an import at run time.
 */
import type { ChartMachine, ChartNode } from '../chart-model.js';
import type * as Replay from './replay.js';

/** What the server tells the page at load. */
export interface PageBoot {
  charts: ChartMachine[];
  /** This view's chart version and package version: a recording of another chart is not drawn. */
  chart: string;
  package: string;
  format: string;
  /** Where live recorder lines arrive (SSE); undefined: replay only. */
  events: string | undefined;
  /** A recording the server was started with, loaded at once. */
  recording: { url: string; name: string } | undefined;
}

export type ReplayLib = Pick<
  typeof Replay,
  'parseRecording' | 'frameAt' | 'activePaths' | 'describeRecord' | 'timerLabel' | 'guessMachine'
>;

export function startPage(boot: PageBoot, lib: ReplayLib): void {
  const byId = (id: string): HTMLElement => {
    const element = document.getElementById(id);
    if (element === null) throw new Error(`the page has no #${id}`);
    return element;
  };
  const input = (id: string): HTMLInputElement => {
    const element = byId(id);
    if (!(element instanceof HTMLInputElement)) throw new Error(`#${id} is not an input`);
    return element;
  };
  const make = (tag: string, className?: string, text?: string): HTMLElement => {
    const element = document.createElement(tag);
    if (className !== undefined) element.className = className;
    if (text !== undefined) element.textContent = text;
    return element;
  };

  const chartsBox = byId('charts');
  const logList = byId('log');
  const waitsList = byId('waits');
  const banner = byId('banner');
  const modeText = byId('mode');
  const position = byId('position');
  const slider = input('slider');
  const follow = input('follow');
  const fileInput = input('file');
  const liveButton = byId('live');
  const showInternal = input('internal');
  byId('versions').textContent = `package ${boot.package} · chart ${boot.chart}`;

  // The charts, drawn once as nested boxes from the machines' definitions.
  const boxes = new Map<string, HTMLElement>();
  const chips = new Map<string, HTMLElement>();
  const drawNode = (machine: string, node: ChartNode, title: string): HTMLElement => {
    const box = make('div', `state ${node.type}`);
    const key = `${machine}:${node.path}`;
    box.dataset.state = key;
    const head = make('div', 'title');
    head.append(make('span', 'name', title));
    if (node.invokes.length > 0) head.append(make('span', 'invokes', ` runs ${node.invokes.join(', ')}`));
    if (node.tags.length > 0) head.append(make('span', 'tags', ` ${node.tags.map((tag) => `#${tag}`).join(' ')}`));
    const chip = make('span', 'actors');
    head.append(chip);
    box.append(head);
    if (node.transitions.length > 0) {
      const list = make('ul', 'transitions');
      for (const transition of node.transitions) {
        const targets = transition.targets.map((target) => target.split('.').pop() ?? target).join(', ');
        list.append(make('li', undefined, `${transition.label} → ${targets}`));
      }
      box.append(list);
    }
    if (node.children.length > 0) {
      const children = make('div', node.type === 'parallel' ? 'children regions' : 'children');
      for (const child of node.children) {
        const initial = node.initial === child.path ? '▸ ' : '';
        children.append(drawNode(machine, child, `${initial}${child.key}`));
      }
      box.append(children);
    }
    boxes.set(key, box);
    chips.set(key, chip);
    return box;
  };
  for (const machine of boot.charts) {
    const section = make('section', 'chart');
    section.dataset.machine = machine.id;
    section.append(make('h2', undefined, `${machine.title} (${machine.id})`));
    const root = drawNode(machine.id, machine.root, '(any state)');
    root.classList.add('root');
    section.append(root);
    chartsBox.append(section);
  }

  let records: Replay.RecordLine[] = [];
  let header: Replay.RecordLine | undefined;
  let problems: string[] = [];
  let index = -1;
  let live: EventSource | undefined;
  let scheduled = false;

  const seconds = (ms: number) => `${(ms / 1000).toFixed(3)} s`;
  const start = () => records[0]?.t ?? 0;

  /** Whether the recording was made against this chart; otherwise the reason it is not drawn. */
  const mismatch = (): string | undefined => {
    if (header === undefined) {
      return records.length === 0
        ? undefined
        : 'This recording has no header line, so the chart it was made against is unknown: states are not highlighted (the log is shown).';
    }
    if (header.format !== boot.format)
      return `This recording's format is ${String(header.format)}; this view reads ${boot.format}. States are not highlighted.`;
    if (header.chart !== boot.chart) {
      return `This recording was made with package ${String(header.package)} against chart ${String(header.chart)}; this view draws chart ${boot.chart} (package ${boot.package}). The charts differ, so states are not highlighted; the log is shown as recorded.`;
    }
    return undefined;
  };

  const showBanner = (unknownStates: string[]) => {
    const lines = [...problems.map((problem) => `Skipped ${problem}`)];
    const reason = mismatch();
    if (reason !== undefined) lines.unshift(reason);
    if (unknownStates.length > 0) lines.push(`States not in this chart: ${unknownStates.join(', ')}`);
    banner.textContent = lines.join('\n');
    banner.hidden = lines.length === 0;
  };

  // Which machine each actor runs, as the log meets them: lines of other actors (a promise
  // behind a request) and `xstate.init` events are internal, hidden unless asked for.
  let machines = new Map<string, string | undefined>();
  const internal: boolean[] = [];
  const logLine = (record: Replay.RecordLine, at: number): HTMLLIElement => {
    if (record.kind === 'actor' || !machines.has(record.actor)) {
      const parent = typeof record.parent === 'string' ? record.parent : undefined;
      machines.set(record.actor, typeof record.machine === 'string' ? record.machine : lib.guessMachine(record.actor, parent));
    }
    const machine = machines.get(record.actor);
    const hidden = machine === undefined || (record.kind === 'event' && record.event === 'xstate.init');
    internal[at] = hidden;
    const item = document.createElement('li');
    item.className = `kind-${record.kind}${hidden ? ' internal' : ''}`;
    item.dataset.index = String(at);
    const who = machine === 'connection' ? 'connection' : record.actor;
    item.append(
      make('span', 'time', `+${seconds(record.t - start())}`),
      make('span', 'actor', who),
      make('span', 'text', lib.describeRecord(record)),
    );
    return item;
  };

  const rebuildLog = () => {
    machines = new Map();
    internal.length = 0;
    logList.replaceChildren(...records.map(logLine));
  };
  /** The next record the log shows, from `from` in direction `step` (internal ones count only when shown). */
  const nextShown = (from: number, step: 1 | -1): number => {
    let at = from + step;
    while (!showInternal.checked && at >= 0 && at < records.length && internal[at] === true) at += step;
    return at;
  };

  /**
   * The chart view scrolls the connection's innermost active state into view when it changes (the
   * modern states sit far below the fold); while it stays, the page is left where the reader put it.
   */
  let revealed: string | undefined;
  const revealActive = (actors: readonly { machine: string | undefined; value: unknown }[]) => {
    const connection = actors.find((actor) => actor.machine === 'connection');
    if (connection === undefined) return;
    const paths = lib.activePaths(connection.value);
    const leaf = paths.find((path) => !paths.some((other) => other.startsWith(`${path}.`)));
    const box = leaf === undefined ? undefined : boxes.get(`connection:${leaf}`);
    if (box === undefined || leaf === revealed) return;
    revealed = leaf;
    box.scrollIntoView({ block: 'nearest', inline: 'nearest' });
  };

  const render = () => {
    scheduled = false;
    const frame = lib.frameAt(records, index);
    const drawable = mismatch() === undefined;
    for (const box of boxes.values()) {
      box.classList.remove('active');
      box.removeAttribute('aria-current');
    }
    for (const chip of chips.values()) chip.textContent = '';
    const unknown: string[] = [];
    if (drawable) {
      for (const actor of frame.actors) {
        for (const path of lib.activePaths(actor.value)) {
          const key = `${actor.machine ?? '?'}:${path}`;
          const box = boxes.get(key);
          if (box === undefined) {
            unknown.push(key);
            continue;
          }
          box.classList.add('active');
          box.setAttribute('aria-current', 'true');
          // Several POST streams can be in one state at once: name them.
          if (actor.machine !== 'connection' && !lib.activePaths(actor.value).some((other) => other.startsWith(`${path}.`))) {
            const chip = chips.get(key);
            if (chip !== undefined) chip.textContent = `${chip.textContent} ${actor.name}`;
          }
        }
      }
    }
    showBanner(unknown);

    for (const item of logList.querySelectorAll('li.current')) item.classList.remove('current');
    const current = logList.children.item(index);
    if (current !== null) {
      current.classList.add('current');
      current.scrollIntoView({ block: 'nearest' });
    }
    // After the log's line: a new active state wins the page's scroll over the log.
    revealActive(frame.actors);
    logList.classList.toggle('replaying', index < records.length - 1);

    // Waits: each pending timer of a live actor, with what is left of it.
    const now = live !== undefined && follow.checked ? Date.now() : frame.t;
    waitsList.replaceChildren(
      ...frame.actors.flatMap((actor) =>
        actor.timers.map((timer) => {
          const left = Math.max(timer.due - now, 0);
          const attempt = actor.attempt !== undefined && actor.attempt > 0 ? `, attempt ${actor.attempt}` : '';
          return make(
            'li',
            undefined,
            `${actor.name}: ${lib.timerLabel(timer.id)}: ${seconds(left)} left of ${seconds(timer.delay)}${attempt}`,
          );
        }),
      ),
    );
    if (waitsList.children.length === 0) waitsList.append(make('li', 'none', 'none'));

    const t = records[index]?.t;
    // The session of the connection that started last (a live view can see one transport after another).
    const session = frame.actors.filter((actor) => actor.parent === undefined).at(-1)?.session;
    position.textContent =
      records.length === 0
        ? 'no records'
        : `record ${index + 1} of ${records.length} · +${seconds((t ?? start()) - start())}${session === undefined ? '' : ` · session ${session}`}`;
    slider.min = String(start());
    slider.max = String(records.at(-1)?.t ?? start());
    slider.value = String(t ?? start());
  };
  const schedule = () => {
    if (scheduled) return;
    scheduled = true;
    requestAnimationFrame(render);
  };

  const go = (next: number) => {
    index = Math.max(-1, Math.min(next, records.length - 1));
    follow.checked = index === records.length - 1;
    render();
  };

  const stopLive = () => {
    live?.close();
    live = undefined;
  };

  const load = (text: string, name: string) => {
    stopLive();
    const recording = lib.parseRecording(text);
    records = recording.records;
    header = recording.header;
    problems = recording.problems;
    modeText.textContent = `replay: ${name}`;
    rebuildLog();
    go(records.length === 0 ? -1 : 0);
  };

  const startLive = () => {
    if (boot.events === undefined) return;
    stopLive();
    fileInput.value = '';
    records = [];
    header = undefined;
    problems = [];
    index = -1;
    follow.checked = true;
    rebuildLog();
    modeText.textContent = 'live: connecting…';
    const source = new EventSource(boot.events);
    live = source;
    source.onopen = () => {
      modeText.textContent = 'live';
      // Reconnected: the server sends its whole history again, so start over rather than log it twice.
      if (records.length > 0) {
        records = [];
        header = undefined;
        problems = [];
        index = -1;
        rebuildLog();
      }
    };
    source.onerror = () => {
      modeText.textContent = 'live: the view server is unreachable, retrying…';
    };
    source.onmessage = (message: MessageEvent<string>) => {
      const parsed = lib.parseRecording(message.data);
      if (parsed.header !== undefined) {
        // A new recorder attached (a new transport): its header starts a new recording.
        header = parsed.header;
      }
      problems = [...problems, ...parsed.problems].slice(-5);
      for (const record of parsed.records) {
        records.push(record);
        logList.append(logLine(record, records.length - 1));
      }
      if (follow.checked) index = records.length - 1;
      schedule();
    };
  };

  byId('first').addEventListener('click', () => {
    go(0);
  });
  byId('back').addEventListener('click', () => {
    go(nextShown(index, -1));
  });
  byId('forward').addEventListener('click', () => {
    go(nextShown(index, 1));
  });
  showInternal.addEventListener('change', () => {
    logList.classList.toggle('show-internal', showInternal.checked);
  });
  byId('last').addEventListener('click', () => {
    go(records.length - 1);
  });
  slider.addEventListener('input', () => {
    const t = Number(slider.value);
    let at = 0;
    while (at + 1 < records.length && (records[at + 1]?.t ?? Infinity) <= t) at++;
    go(at);
  });
  follow.addEventListener('change', () => {
    if (follow.checked) go(records.length - 1);
  });
  logList.addEventListener('click', (event) => {
    const item = (event.target as HTMLElement).closest('li');
    if (item?.dataset.index !== undefined) go(Number(item.dataset.index));
  });
  document.addEventListener('keydown', (event) => {
    if (event.target instanceof HTMLInputElement && event.target.type !== 'range') return;
    if (event.key === 'ArrowRight') go(nextShown(index, 1));
    else if (event.key === 'ArrowLeft') go(nextShown(index, -1));
    else return;
    event.preventDefault();
  });
  fileInput.addEventListener('change', () => {
    const file = fileInput.files?.[0];
    if (file === undefined) return;
    file.text().then(
      (text) => {
        load(text, file.name);
      },
      (error: unknown) => {
        banner.hidden = false;
        banner.textContent = `Could not read ${file.name}: ${String(error)}`;
      },
    );
  });
  liveButton.hidden = boot.events === undefined;
  liveButton.addEventListener('click', startLive);
  // The countdown of a wait moves while the page follows a live transport.
  setInterval(() => {
    if (live !== undefined && follow.checked && waitsList.querySelector('li:not(.none)') !== null) schedule();
  }, 250);

  if (boot.recording !== undefined) {
    const { url, name } = boot.recording;
    fetch(url)
      .then(
        async (response) => {
          if (!response.ok) throw new Error(`HTTP ${response.status}`);
          load(await response.text(), name);
        },
        (error: unknown) => {
          banner.hidden = false;
          banner.textContent = `Could not load the recording: ${String(error)}`;
        },
      )
      .catch((error: unknown) => {
        banner.hidden = false;
        banner.textContent = `Could not load the recording: ${String(error)}`;
      });
  } else {
    startLive();
  }
  render();
}
