// The identity providers users may sign in with: Google, Apple, GitHub and Facebook by their client IDs,
// and any OpenID Connect provider by its issuer. Client secrets go to the server and never come back to
// the page: the console's auth forwarding replaces them with "clientSecretSet" (ConsoleSecrets.swift).

import { api } from './api.js';
import { confirmAction, field, formDialog } from './dialog.js';
import { h, toast } from './dom.js';

const BUILT_IN = [
  { id: 'google.com', title: 'Google', summary: 'Google Sign-In ID tokens for your client IDs.', clientLabel: 'OAuth client IDs', clientHint: 'Your apps’ Google client IDs (web, iOS, Android), comma-separated: ID tokens must be issued to one of them.' },
  { id: 'apple.com', title: 'Apple', summary: 'Sign in with Apple, on the web and in your apps.', clientLabel: 'Services ID', clientHint: 'The Services ID of Sign in with Apple on the web.', bundleIds: true },
  { id: 'github.com', title: 'GitHub', summary: 'GitHub access tokens of your OAuth app.', clientLabel: 'Client ID', clientHint: 'The GitHub OAuth app’s client ID.', secret: true },
  { id: 'facebook.com', title: 'Facebook', summary: 'Facebook Login access tokens of your app.', clientLabel: 'App ID', clientHint: 'The Facebook app’s ID.', secret: true },
];

export function createProviders(project) {
  const base = `/console/api/auth/identitytoolkit.googleapis.com/v2/projects/${encodeURIComponent(project)}`;
  let builtIn = {};
  let oidc = [];
  const list = h('ul', { class: 'method-list', id: 'provider-list' });
  const error = h('p', { class: 'form-error', role: 'alert', hidden: true });
  const addOIDC = h('button', { type: 'button', class: 'button small', id: 'add-oidc' }, 'Add OpenID provider');
  const element = h('section', { class: 'panel providers-panel' },
    h('header', { class: 'panel-header' }, h('h2', {}, 'Sign-in providers'), addOIDC),
    h('p', { class: 'panel-note' }, 'Users sign in with these once they are on. Hearth checks every token with the provider before anyone is signed in.'),
    list, error);

  const editor = createEditor();
  element.append(editor.dialog);

  function row(id, title, config, description) {
    const on = Boolean(config?.enabled);
    const toggle = h('input', {
      id: `provider-${id}`, type: 'checkbox', role: 'switch', class: 'switch', checked: on,
      'aria-describedby': `provider-${id}-state`, 'aria-label': `${title} sign-in`,
    });
    toggle.addEventListener('change', () => {
      if (!config) {
        toggle.checked = false;
        edit(id, title, null);  // a client ID first
        return;
      }
      save(id, { enabled: toggle.checked }, ['enabled'], `${title} sign-in is ${toggle.checked ? 'on' : 'off'}.`);
    });
    const state = config
      ? `${on ? 'On' : 'Off'} · client ${config.clientId}${config.clientSecretSet ? ' · secret set' : ''}`
      : 'Not set up';
    const configure = h('button', { type: 'button', class: 'button small', id: `configure-${id}`, onclick: () => edit(id, title, config) }, 'Configure');
    const remove = id.startsWith('oidc.')
      ? h('button', { type: 'button', class: 'button small danger-text', onclick: () => removeOIDC(id) }, 'Delete') : null;
    return h('li', { class: 'method provider', 'data-provider': id },
      h('label', { for: `provider-${id}`, class: 'method-text' }, h('span', { class: 'method-title' }, title),
        h('span', { class: 'method-description' }, description),
        h('span', { class: 'method-state', id: `provider-${id}-state` }, state)),
      h('div', { class: 'provider-actions' }, configure, remove, toggle));
  }

  function render() {
    const rows = BUILT_IN.map((provider) => row(provider.id, provider.title, builtIn[provider.id], provider.summary));
    for (const config of oidc) {
      const id = config.name.split('/').pop();
      rows.push(row(id, config.displayName || id, config, `OpenID Connect · issuer ${config.issuer}`));
    }
    list.replaceChildren(...rows);
  }

  async function load() {
    try {
      const [defaults, openID] = await Promise.all([api.get(`${base}/defaultSupportedIdpConfigs`), api.get(`${base}/oauthIdpConfigs`)]);
      builtIn = Object.fromEntries((defaults.defaultSupportedIdpConfigs || []).map((config) => [config.name.split('/').pop(), config]));
      oidc = openID.oauthIdpConfigs || [];
      error.hidden = true;
      render();
    } catch (failure) {
      error.textContent = `The providers could not be loaded: ${failure.message}`;
      error.hidden = false;
    }
  }

  function collectionOf(id) {
    return id.startsWith('oidc.') ? 'oauthIdpConfigs' : 'defaultSupportedIdpConfigs';
  }

  async function save(id, body, mask, message) {
    try {
      await api.patch(`${base}/${collectionOf(id)}/${encodeURIComponent(id)}?updateMask=${mask.join(',')}`, body);
      toast(message, 'success');
    } catch (failure) {
      toast(`Not changed: ${failure.message}`, 'error');
    }
    await load();
  }

  async function removeOIDC(id) {
    const confirmed = await confirmAction({
      title: `Delete ${id}?`, message: `Users can no longer sign in with ${id}. Their accounts stay, with their other sign-in methods.`,
      okLabel: 'Delete provider',
    });
    if (!confirmed) return;
    try {
      await api.delete(`${base}/oauthIdpConfigs/${encodeURIComponent(id)}`);
      toast(`Deleted ${id}.`, 'success');
    } catch (failure) {
      toast(failure.message, 'error');
    }
    await load();
  }

  function edit(id, title, config) {
    editor.open({ id, title, config, provider: BUILT_IN.find((p) => p.id === id), onSaved: load, base });
  }

  addOIDC.addEventListener('click', () => editor.open({ id: null, title: 'OpenID provider', config: null, provider: null, onSaved: load, base }));
  return { element, load };
}

// One dialog for every provider: client ID, the secret (write-only), Apple's bundle IDs, or an OpenID
// provider's name and issuer. Saving sends only what changed (an update mask), so a secret left blank stays.
function createEditor() {
  const enabled = h('input', { id: 'provider-enabled', type: 'checkbox' });
  const suffix = h('input', { id: 'provider-oidc-id', autocomplete: 'off', spellcheck: 'false', placeholder: 'partner' });
  const displayName = h('input', { id: 'provider-display-name', autocomplete: 'off' });
  const issuer = h('input', { id: 'provider-issuer', type: 'url', autocomplete: 'off', spellcheck: 'false', placeholder: 'https://accounts.example.com' });
  const clientId = h('input', { id: 'provider-client-id', autocomplete: 'off', spellcheck: 'false' });
  const secret = h('input', { id: 'provider-secret', type: 'password', autocomplete: 'new-password' });
  const bundleIds = h('input', { id: 'provider-bundle-ids', autocomplete: 'off', spellcheck: 'false', placeholder: 'com.example.app' });
  const fields = {
    suffix: field('Provider ID (after oidc.)', suffix, 'Letters, digits, - and _. Apps sign in with oidc.<this>.'),
    displayName: field('Display name', displayName),
    issuer: field('Issuer', issuer, 'Exactly the iss of the provider’s tokens; its keys are found through <issuer>/.well-known/openid-configuration.'),
    clientId: field('Client ID', clientId),
    secret: field('Client secret', secret),
    bundleIds: field('App bundle IDs', bundleIds, 'Your iOS apps’ bundle IDs, comma-separated: their tokens carry the bundle ID instead of the Services ID.'),
    enabled: h('div', { class: 'field checkbox-field' }, enabled, h('label', { for: 'provider-enabled' }, 'Users may sign in with it')),
  };
  let current = null;
  const view = formDialog({
    id: 'provider-dialog', title: 'Sign-in provider', description: '',
    fields: Object.values(fields), submitLabel: 'Save', submitId: 'provider-save',
    onSubmit: async () => {
      const { id, config, provider, base, onSaved } = current;
      const body = { enabled: enabled.checked, clientId: clientId.value.trim() };
      const mask = ['enabled', 'clientId'];
      if (secret.value) { body.clientSecret = secret.value; mask.push('clientSecret'); }
      if (provider?.bundleIds) {
        body.appleSignInConfig = { bundleIds: bundleIds.value.split(',').map((s) => s.trim()).filter(Boolean) };
        mask.push('appleSignInConfig.bundleIds');
      }
      if (!provider) {
        body.issuer = issuer.value.trim();
        body.displayName = displayName.value.trim() || null;
        body.responseType = { idToken: true, code: false };
        mask.push('issuer', 'displayName');
      }
      const targetId = id || `oidc.${suffix.value.trim()}`;
      const collection = provider ? 'defaultSupportedIdpConfigs' : 'oauthIdpConfigs';
      if (config) {
        await api.patch(`${base}/${collection}/${encodeURIComponent(targetId)}?updateMask=${mask.join(',')}`, body);
      } else {
        const parameter = provider ? 'idpId' : 'oauthIdpConfigId';
        await api.post(`${base}/${collection}?${parameter}=${encodeURIComponent(targetId)}`, body);
      }
      secret.value = '';
      toast(`${current.title} ${config ? 'saved' : 'set up'}.`, 'success');
      await onSaved();
    },
  });

  return {
    dialog: view.dialog,
    open(settings) {
      current = settings;
      const { id, config, provider } = settings;
      const isOIDC = !provider;
      view.dialog.querySelector('h2').textContent = id ? `Configure ${settings.title}` : 'Add an OpenID Connect provider';
      fields.suffix.hidden = !isOIDC || Boolean(id);
      fields.displayName.hidden = !isOIDC;
      fields.issuer.hidden = !isOIDC;
      fields.secret.hidden = !(provider?.secret);
      fields.bundleIds.hidden = !(provider?.bundleIds);
      fields.clientId.querySelector('label').textContent = provider?.clientLabel || 'Client ID';
      suffix.value = '';
      displayName.value = config?.displayName || '';
      issuer.value = config?.issuer || '';
      clientId.value = config?.clientId || '';
      secret.value = '';
      secret.placeholder = config?.clientSecretSet ? 'Set (hidden): type a new one to replace it' : 'Required to turn it on';
      bundleIds.value = (config?.appleSignInConfig?.bundleIds || []).join(', ');
      enabled.checked = config ? Boolean(config.enabled) : true;
      view.open();
    },
  };
}
