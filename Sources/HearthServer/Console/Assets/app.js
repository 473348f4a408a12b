// The console's shell: session, sign-in and sign-out, the header's namespace selector, the navigation
// and which screen the hash shows. Screens are modules loaded on first use; each exports
// mount(container, route, context) returning { update?(route): bool, unmount?() }.

import { api, setCsrf } from './api.js';
import { installConfirmDialog } from './dialog.js';
import { emptyState, h, toast } from './dom.js';
import { parseRoute, routeHash } from './router.js';
import { showSignin } from './signin.js';

const loaders = {
  data: () => import('./data.js'),
  rules: () => import('./rules.js'),
  hooks: () => import('./hooks.js'),
  auth: () => import('./auth.js'),
  usage: () => import('./usage.js'),
  namespaces: () => import('./namespaces.js'),
};

const titles = { data: 'Data', rules: 'Rules', hooks: 'Triggers', auth: 'Authentication', usage: 'Usage', namespaces: 'Namespaces' };
const storedNamespaceKey = 'hearth.namespace';

const state = {
  session: null,
  namespaces: [],
  ns: null,
  screen: null,
  instance: null,
  // Screens load asynchronously; a later navigation must win over an earlier one still loading.
  mountCount: 0,
};

const byId = (id) => document.getElementById(id);

const context = {
  get session() { return state.session; },
  get ns() { return state.ns; },
  get namespaces() { return state.namespaces; },
  navigate(route) { location.hash = routeHash(route); },
  refreshNamespaces: () => loadNamespaces(),
};

function start() {
  installConfirmDialog();
  window.addEventListener('hearth:signed-out', () => {
    if (state.session) toast('Your console session ended. Sign in again to continue.', 'error');
    showSignedOut();
  });
  window.addEventListener('hashchange', () => showRoute());
  byId('signout').addEventListener('click', signOut);
  byId('namespace-select').addEventListener('change', (event) => chooseNamespace(event.target.value));
  watchNavScroll();
  enter();
}

/// On phones the navigation is one sideways-scrolling line: it fades at the edges that have more
/// links, and keeps the current screen's link in view.
function watchNavScroll() {
  const nav = document.querySelector('.sidebar');
  const update = () => {
    const hidden = nav.scrollWidth - nav.clientWidth;
    nav.classList.toggle('fade-start', hidden > 1 && nav.scrollLeft > 1);
    nav.classList.toggle('fade-end', hidden > 1 && nav.scrollLeft < hidden - 1);
  };
  nav.addEventListener('scroll', update, { passive: true });
  new ResizeObserver(() => {
    revealCurrentNavLink();
    update();
  }).observe(nav);
}

function revealCurrentNavLink() {
  const nav = document.querySelector('.sidebar');
  const link = nav.querySelector('.nav-link[aria-current="page"]');
  if (!link || nav.scrollWidth <= nav.clientWidth) return;
  const margin = 40; // the width of the fade
  const navBox = nav.getBoundingClientRect();
  const box = link.getBoundingClientRect();
  if (box.right > navBox.right - margin) nav.scrollLeft += box.right - navBox.right + margin;
  else if (box.left < navBox.left + margin) nav.scrollLeft -= navBox.left + margin - box.left;
}

async function enter() {
  let session;
  try {
    session = await api.get('/console/api/session');
  } catch (error) {
    if (error.status === 401) return showSignedOut();
    return showStartupError(error);
  }
  setCsrf(session.csrf);
  state.session = session;
  byId('project-name').textContent = session.project || '';
  byId('emulator-badge').hidden = !session.emulator;
  byId('server-version').textContent = session.version ? `Hearth ${session.version}` : '';
  await loadNamespaces();
  byId('loading-screen').hidden = true;
  byId('signin-screen').hidden = true;
  byId('app').hidden = false;
  showRoute();
}

function showStartupError(error) {
  const retry = h('button', { type: 'button', class: 'button primary', onclick: () => location.reload() }, 'Try again');
  byId('loading-screen').replaceChildren(emptyState('The console could not start.', error.message, retry));
}

function showSignedOut() {
  unmountScreen();
  state.session = null;
  setCsrf(null);
  byId('loading-screen').hidden = true;
  byId('app').hidden = true;
  const screen = byId('signin-screen');
  screen.hidden = false;
  showSignin(screen, { onSignedIn: enter });
}

async function signOut() {
  try {
    await api.post('/console/api/signout', {});
  } catch (error) {
    toast(error.message, 'error');
    return;
  }
  state.session = null;
  showSignedOut();
}

async function loadNamespaces() {
  try {
    const answer = await api.get('/console/api/namespaces');
    state.namespaces = answer.namespaces || [];
  } catch (error) {
    toast(`The list of namespaces could not be loaded: ${error.message}`, 'error');
    if (!state.namespaces.length && state.session) {
      state.namespaces = [{ name: state.session.defaultNamespace, default: true }];
    }
  }
  const known = (name) => state.namespaces.some((namespace) => namespace.name === name);
  const remembered = sessionStorage.getItem(storedNamespaceKey);
  const fallback = known(remembered) ? remembered : state.session.defaultNamespace;
  const routed = parseRoute(location.hash).ns;
  setNamespace(routed || (known(state.ns) ? state.ns : fallback));
}

function fillNamespaceSelect() {
  const select = byId('namespace-select');
  const names = state.namespaces.map((namespace) => namespace.name);
  // A namespace named in the URL but not (yet) listed still shows, so the selector never lies.
  if (state.ns && !names.includes(state.ns)) names.push(state.ns);
  select.replaceChildren(...names.map((name) => {
    const isDefault = state.namespaces.some((namespace) => namespace.name === name && namespace.default);
    return h('option', { value: name }, isDefault ? `${name} (default)` : name);
  }));
  select.value = state.ns;
}

function setNamespace(ns) {
  state.ns = ns;
  sessionStorage.setItem(storedNamespaceKey, ns);
  fillNamespaceSelect();
  byId('nav-data').href = routeHash({ screen: 'data', ns, path: '/' });
  byId('nav-rules').href = routeHash({ screen: 'rules', ns });
  byId('nav-hooks').href = routeHash({ screen: 'hooks', ns });
}

function chooseNamespace(ns) {
  setNamespace(ns);
  if (state.screen === 'data') context.navigate({ screen: 'data', ns, path: '/' });
  else if (state.screen === 'rules') context.navigate({ screen: 'rules', ns });
  else if (state.screen === 'hooks') context.navigate({ screen: 'hooks', ns });
}

function showRoute() {
  if (!state.session) return;
  const route = parseRoute(location.hash);
  if (!route.screen) return replaceRoute({ screen: 'data', ns: state.ns, path: '/' });
  if ((route.screen === 'data' || route.screen === 'rules' || route.screen === 'hooks') && !route.ns) return replaceRoute({ ...route, ns: state.ns });
  if (route.ns && route.ns !== state.ns) setNamespace(route.ns);
  for (const link of document.querySelectorAll('.nav-link')) {
    if (link.dataset.screen === route.screen) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  revealCurrentNavLink();
  document.title = `${titles[route.screen]}${route.ns ? ` · ${route.ns}` : ''} — Hearth`;
  if (state.screen === route.screen && state.instance?.update?.(route)) return;
  mountScreen(route);
}

function replaceRoute(route) {
  history.replaceState(null, '', routeHash(route));
  showRoute();
}

async function mountScreen(route) {
  unmountScreen();
  const count = ++state.mountCount;
  const view = byId('view');
  view.replaceChildren(h('p', { class: 'loading' }, 'Loading…'));
  let module;
  try {
    module = await loaders[route.screen]();
  } catch (error) {
    view.replaceChildren(emptyState('This page could not be loaded.', `Reload the console. (${error.message})`));
    return;
  }
  if (count !== state.mountCount) return;
  view.replaceChildren();
  state.screen = route.screen;
  state.instance = module.mount(view, route, context) || {};
}

function unmountScreen() {
  state.mountCount += 1;
  state.instance?.unmount?.();
  state.instance = null;
  state.screen = null;
}

start();
