// The Authentication screen: the users table with paging, lookup, creation and per-user actions, and
// beside it the sign-in methods, the identity providers, the blocking hooks and the outbox
// (auth-methods.js, auth-providers.js, auth-blocking.js, auth-outbox.js).

import { api, authUrl } from './api.js';
import { confirmAction, field, formDialog } from './dialog.js';
import { emptyState, h, toast } from './dom.js';
import { formatDate, formatDateTime, formatNumber, relativeTime } from './format.js';
import { createBlockingHooks } from './auth-blocking.js';
import { createMethods } from './auth-methods.js';
import { createOutbox } from './auth-outbox.js';
import { createProviders } from './auth-providers.js';

const PAGE_SIZE = 25;
const columns = ['UID', 'Email', 'Display name', 'Sign-in', 'Created', 'Last sign-in', 'Status', 'Actions'];

// What the Sign-in column calls each provider.
const PROVIDER_NAMES = {
  password: 'Email', phone: 'Phone', 'google.com': 'Google', 'apple.com': 'Apple', 'github.com': 'GitHub',
  'facebook.com': 'Facebook', 'twitter.com': 'Twitter',
};

export function mount(container, route, context) {
  const project = context.session.authProject;
  const call = (endpoint, body) => api.post(authUrl(project, endpoint), body);
  let offset = 0;
  let total = 0;
  let query = null;

  const outbox = createOutbox(project);
  const methods = createMethods(project);
  const providers = createProviders(project);
  const blocking = createBlockingHooks(project);
  const search = h('input', { id: 'user-search', type: 'search', placeholder: 'Exact email or UID', autocomplete: 'off', spellcheck: 'false' });
  const searchForm = h('form', { class: 'search-form', role: 'search' },
    h('label', { for: 'user-search', class: 'visually-hidden' }, 'Find a user by exact email or UID'), search,
    h('button', { type: 'submit', class: 'button' }, 'Search'));
  const createButton = h('button', { id: 'create-user', type: 'button', class: 'button primary' }, 'Add user');
  const count = h('span', { id: 'users-count', class: 'count-pill' });
  const searchNote = h('div', { class: 'search-note', hidden: true });
  const body = h('tbody');
  const table = h('table', { id: 'users-table', class: 'data-table users-table' },
    h('thead', {}, h('tr', {}, columns.map((name) => h('th', { scope: 'col' }, name)))), body);
  const prev = h('button', { id: 'users-prev', type: 'button', class: 'button small' }, 'Previous');
  const next = h('button', { id: 'users-next', type: 'button', class: 'button small' }, 'Next');
  const pageInfo = h('span', { id: 'users-page', class: 'muted' });
  const pager = h('nav', { class: 'pager', 'aria-label': 'User pages' }, prev, pageInfo, next);
  const create = createUserDialog(call, async (created) => {
    toast(created.email ? `Created the user ${created.email}.` : 'Created the user.', 'success');
    query = null;
    search.value = '';
    offset = 0;
    await loadPage();
    await showCreated(created.localId);
  });

  container.append(h('section', { class: 'view auth-view' },
    h('header', { class: 'view-header' }, h('div', {}, h('h1', {}, 'Authentication'), h('p', { class: 'view-subtitle' }, `Auth project ${project}`))),
    h('section', { class: 'panel users-panel' },
      h('header', { class: 'panel-header' }, h('h2', {}, 'Users'), count),
      h('div', { class: 'toolbar' }, searchForm, h('div', { class: 'toolbar-spacer' }), createButton),
      searchNote,
      h('div', { class: 'table-scroll' }, table),
      pager),
    h('div', { class: 'auth-grid' }, h('div', { class: 'auth-column' }, methods.element, providers.element, blocking.element), outbox.element),
    create.dialog));

  async function loadPage() {
    try {
      const answer = await call('accounts:query', { returnUserInfo: true, limit: PAGE_SIZE, offset });
      total = Number(answer.recordsCount || 0);
      const users = answer.userInfo || [];
      if (!users.length && offset > 0 && total > 0) {
        // The last page emptied (its users were deleted): show the one before.
        offset = Math.max(0, Math.floor((total - 1) / PAGE_SIZE) * PAGE_SIZE);
        return loadPage();
      }
      count.textContent = `${formatNumber(total)} ${total === 1 ? 'user' : 'users'}`;
      searchNote.hidden = true;
      pager.hidden = false;
      renderRows(users, total ? null : emptyState('No users yet.',
        'Users appear here when they sign up from your app. Use Add user to create one by hand.'));
      pageInfo.textContent = total ? `${offset + 1}–${Math.min(offset + users.length, total)} of ${formatNumber(total)}` : '';
      prev.disabled = offset === 0;
      next.disabled = offset + PAGE_SIZE >= total;
    } catch (error) {
      renderRows([], emptyState('The users could not be loaded.', error.message));
    }
  }

  // The new user may sort onto another page; it is shown on top of this one so the admin sees it.
  async function showCreated(uid) {
    if (!uid) return;
    let row = body.querySelector(`tr[data-uid="${CSS.escape(uid)}"]`);
    if (!row) {
      const [user] = (await call('accounts:lookup', { localId: [uid] }).catch(() => ({}))).users || [];
      if (!user) return;
      body.querySelector('.empty-row')?.remove();
      row = userRow(user);
      body.prepend(row);
    }
    row.classList.add('just-added');
  }

  async function runSearch(text) {
    query = text;
    let users = [];
    try {
      // Either lookup may be the one that matches; an email-looking text is tried as an email first.
      const lookups = text.includes('@') ? [{ email: [text] }, { localId: [text] }] : [{ localId: [text] }, { email: [text] }];
      for (const lookup of lookups) {
        users = (await call('accounts:lookup', lookup)).users || [];
        if (users.length) break;
      }
    } catch (error) {
      if (error.code !== 'USER_NOT_FOUND' && error.code !== 'EMAIL_NOT_FOUND') {
        toast(`The search failed: ${error.message}`, 'error');
        return;
      }
    }
    pager.hidden = true;
    searchNote.hidden = false;
    searchNote.replaceChildren(`${users.length ? 'Showing the user matching' : 'No user matches'} “${text}”. `,
      h('button', { type: 'button', class: 'link-button', id: 'clear-search', onclick: clearSearch }, 'Show all users'));
    renderRows(users, emptyState(`No user has the email or UID “${text}”.`,
      'Search needs the whole email address or UID, exactly as stored (not a part of it).'));
  }

  function clearSearch() {
    query = null;
    search.value = '';
    loadPage();
    search.focus();
  }

  function renderRows(users, empty) {
    if (!users.length) {
      body.replaceChildren(h('tr', { class: 'empty-row' }, h('td', { colspan: String(columns.length) }, empty)));
      return;
    }
    body.replaceChildren(...users.map(userRow));
  }

  function userRow(user) {
    const name = user.email || user.localId;
    const button = (className, label, run, disabled) => h('button', {
      type: 'button', class: `button small ${className}`, 'aria-label': `${label}: ${name}`, disabled, onclick: () => run(user),
    }, label);
    const cell = (label, ...content) => h('td', { 'data-label': label }, content);
    return h('tr', { 'data-uid': user.localId, class: user.disabled ? 'is-disabled' : null },
      cell('UID', h('code', { class: 'uid', title: user.localId }, user.localId)),
      cell('Email', user.email ? h('span', { class: 'email', title: user.email }, user.email)
        : h('span', { class: 'muted' }, isAnonymous(user) ? 'Anonymous' : '—')),
      cell('Display name', user.displayName || h('span', { class: 'muted' }, '—')),
      cell('Sign-in', signInBadges(user)),
      cell('Created', h('time', { title: formatDateTime(user.createdAt) }, formatDate(user.createdAt))),
      cell('Last sign-in', user.lastLoginAt
        ? h('time', { title: formatDateTime(user.lastLoginAt) }, relativeTime(user.lastLoginAt))
        : h('span', { class: 'muted' }, 'Never')),
      cell('Status', h('div', { class: 'status' },
        user.disabled ? h('span', { class: 'badge badge-danger' }, 'Disabled') : h('span', { class: 'badge badge-ok' }, 'Active'),
        user.email && user.emailVerified ? h('span', { class: 'verified' }, 'Email verified') : null)),
      cell('Actions', h('div', { class: 'row-actions' },
        user.disabled ? button('enable-user', 'Enable', (u) => setDisabled(u, false)) : button('disable-user', 'Disable', (u) => setDisabled(u, true)),
        button('reset-user', 'Reset password', sendReset, !user.email),
        button('delete-user danger-text', 'Delete', remove))));
  }

  const refresh = () => (query ? runSearch(query) : loadPage());

  async function setDisabled(user, disabled) {
    try {
      await call('accounts:update', { localId: user.localId, disableUser: disabled });
      toast(disabled ? `Disabled ${user.email || user.localId}: they can't sign in until you enable the account.`
        : `Enabled ${user.email || user.localId}: they can sign in again.`, 'success');
      await refresh();
    } catch (error) {
      toast(error.message, 'error');
    }
  }

  async function remove(user) {
    const name = user.email || user.localId;
    const confirmed = await confirmAction({
      title: `Delete ${name}?`,
      message: `The account ${name} (UID ${user.localId}) is deleted and can no longer sign in. Data stored under its UID stays in the database. This can't be undone.`,
      okLabel: 'Delete user',
    });
    if (!confirmed) return;
    try {
      await call('accounts:delete', { localId: user.localId });
      toast(`Deleted ${name}.`, 'success');
      await refresh();
    } catch (error) {
      toast(error.message, 'error');
    }
  }

  async function sendReset(user) {
    try {
      await call('accounts:sendOobCode', { requestType: 'PASSWORD_RESET', email: user.email });
      toast(`Password reset email for ${user.email} sent. Hearth doesn't deliver email: open the link from the Outbox on this page.`, 'success');
      await outbox.reload();
      outbox.element.scrollIntoView({ block: 'nearest', behavior: 'smooth' });
    } catch (error) {
      toast(error.message, 'error');
    }
  }

  searchForm.addEventListener('submit', (event) => {
    event.preventDefault();
    const text = search.value.trim();
    if (text) runSearch(text);
    else clearSearch();
  });
  search.addEventListener('search', () => { if (!search.value && query) clearSearch(); });
  prev.addEventListener('click', () => { offset = Math.max(0, offset - PAGE_SIZE); loadPage(); });
  next.addEventListener('click', () => { offset += PAGE_SIZE; loadPage(); });
  createButton.addEventListener('click', () => create.open());

  loadPage();
  methods.load();
  providers.load();
  blocking.load();
  outbox.reload();
  return {};
}

// How the user can sign in: a badge per provider (the provider's own account id in its tooltip).
function signInBadges(user) {
  const entries = user.providerUserInfo || [];
  if (!entries.length) return h('span', { class: 'muted' }, isAnonymous(user) ? 'Anonymous' : '—');
  return h('div', { class: 'provider-badges' }, entries.map((entry) => h('span', {
    class: 'badge provider-badge', 'data-provider': entry.providerId,
    title: `${entry.providerId}${entry.rawId ? ` · ${entry.rawId}` : ''}${entry.email ? ` · ${entry.email}` : ''}`,
  }, PROVIDER_NAMES[entry.providerId] || entry.providerId)));
}

function isAnonymous(user) {
  return !user.email && !(user.providerUserInfo || []).length;
}

function createUserDialog(call, onCreated) {
  const email = h('input', { id: 'new-email', type: 'email', autocomplete: 'off', spellcheck: 'false' });
  const password = h('input', { id: 'new-password', type: 'password', autocomplete: 'new-password' });
  const name = h('input', { id: 'new-name', autocomplete: 'off' });
  const view = formDialog({
    id: 'create-user-dialog',
    title: 'Add a user',
    description: 'The user can sign in with this email and password right away.',
    fields: [field('Email', email), field('Password', password, 'At least 6 characters.'), field('Display name (optional)', name)],
    submitLabel: 'Add user',
    submitId: 'new-submit',
    onSubmit: async () => {
      const body = { email: email.value.trim(), password: password.value };
      if (name.value.trim()) body.displayName = name.value.trim();
      const answer = await call('accounts', body);
      await onCreated({ email: body.email, localId: answer?.localId });
    },
  });
  return {
    dialog: view.dialog,
    open() {
      email.value = '';
      password.value = '';
      name.value = '';
      view.open();
    },
  };
}
