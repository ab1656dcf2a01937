<?php
/*
 * ramjet wp, inside one WordPress install: run by php-cli as the
 * install's owner (never root), with the install as working directory.
 * Reads one JSON request on stdin:
 *   {"action": "status"|"enable"|"disable", "path": DIR, "config": FILE,
 *    "user": NAME, "host": HOST, "plugin_src": DIR, "admin_url": URL,
 *    "token": TOKEN}
 * and prints, last, one line: "RAMJET-WP-RESULT " + JSON
 *   {"error": MESSAGE} or {"cache": ACTIVE, "enabled": WHICH, "home": URL,
 *    "token_constant": BOOL}
 * What enable changed is kept in the ramjet_wp_state option so that
 * disable puts back exactly what was there.
 */

const RJ_RESULT         = 'RAMJET-WP-RESULT ';
const RJ_STATE          = 'ramjet_wp_state';
const RJ_PLUGIN         = 'ramjet-cache/ramjet-cache.php';
const RJ_SETTINGS       = 'ramjet_cache_settings';
const RJ_LSCACHE        = 'litespeed-cache/litespeed-cache.php';
const RJ_LSCACHE_OPTION = 'litespeed.conf.cache';

$rj_finished = false;

function rj_done( $result ) {
	global $rj_finished;
	$rj_finished = true;
	echo "\n", RJ_RESULT, json_encode( $result ), "\n";
	exit( 0 );
}

function rj_fail( $message ) {
	rj_done( array( 'error' => $message ) );
}

// WordPress exits on its own when it cannot start (no database: wp_die).
register_shutdown_function(
	function () {
		global $rj_finished;
		if ( $rj_finished ) {
			return;
		}
		$e = error_get_last();
		$why = $e ? $e['message'] . ' in ' . $e['file'] . ':' . $e['line'] : 'WordPress stopped while loading (is its database reachable?)';
		echo "\n", RJ_RESULT, json_encode( array( 'error' => $why ) ), "\n";
	}
);

$rj_req = json_decode( (string) file_get_contents( 'php://stdin' ), true );
if ( ! is_array( $rj_req ) || ! isset( $rj_req['action'], $rj_req['path'], $rj_req['config'] ) ) {
	rj_fail( 'bad request' );
}
if ( ! is_readable( $rj_req['config'] ) ) {
	rj_fail( $rj_req['config'] . ' is not readable by ' . $rj_req['user'] . ', who owns the install' );
}
if ( 'enable' === $rj_req['action'] && ! is_readable( $rj_req['plugin_src'] . '/ramjet-cache.php' ) ) {
	rj_fail( 'the plugin ' . $rj_req['plugin_src'] . '/ramjet-cache.php is not readable by ' . $rj_req['user'] );
}

$_SERVER['HTTP_HOST']   = '' !== (string) $rj_req['host'] ? $rj_req['host'] : 'localhost';
$_SERVER['REQUEST_URI'] = '/';
$_SERVER['SERVER_NAME'] = $_SERVER['HTTP_HOST'];
require $rj_req['path'] . '/wp-load.php';
require_once ABSPATH . 'wp-admin/includes/plugin.php';
require_once ABSPATH . 'wp-admin/includes/file.php';

function rj_active_cache() {
	if ( is_plugin_active( RJ_LSCACHE ) ) {
		return 'litespeed-cache';
	}
	if ( is_plugin_active( RJ_PLUGIN ) ) {
		return 'ramjet-cache';
	}
	return '';
}

function rj_status() {
	$state = get_option( RJ_STATE );
	return array(
		'cache'          => rj_active_cache(),
		'enabled'        => is_array( $state ) ? $state['plugin'] : '',
		'home'           => home_url( '/' ),
		'token_constant' => defined( 'RAMJET_ADMIN_TOKEN' ),
	);
}

// rj_copy copies the plugin tree; what it creates belongs to whoever runs
// this script: the install's owner.
function rj_copy( $src, $dst ) {
	if ( ! mkdir( $dst, 0755 ) ) {
		return false;
	}
	foreach ( scandir( $src ) as $name ) {
		if ( '.' === $name || '..' === $name || 'tests' === $name ) {
			continue;
		}
		$from = $src . '/' . $name;
		$ok   = is_dir( $from ) ? rj_copy( $from, $dst . '/' . $name ) : copy( $from, $dst . '/' . $name );
		if ( ! $ok ) {
			return false;
		}
	}
	return true;
}

// rj_remove removes a tree this script created, never following a link.
function rj_remove( $path ) {
	if ( is_link( $path ) || ! is_dir( $path ) ) {
		return unlink( $path );
	}
	foreach ( scandir( $path ) as $name ) {
		if ( '.' !== $name && '..' !== $name && ! rj_remove( $path . '/' . $name ) ) {
			return false;
		}
	}
	return rmdir( $path );
}

function rj_enable_litespeed( $state ) {
	if ( ! is_array( $state ) ) {
		$state = array(
			'plugin' => 'litespeed-cache',
			'prev'   => get_option( RJ_LSCACHE_OPTION, null ),
		);
		update_option( RJ_STATE, $state, false );
	}
	update_option( RJ_LSCACHE_OPTION, 1 );
}

function rj_enable_ramjet( $state, $req ) {
	$dir      = WP_PLUGIN_DIR . '/ramjet-cache';
	$settings = get_option( RJ_SETTINGS, null );
	$had      = is_array( $settings );
	$settings = $had ? $settings : array();
	if ( ! is_array( $state ) ) {
		$state = array(
			'plugin'     => 'ramjet-cache',
			'had'        => $had,
			'copied'     => ! file_exists( $dir ),
			'was_active' => is_plugin_active( RJ_PLUGIN ),
			'prev'       => array(
				'admin_url'   => isset( $settings['admin_url'] ) ? $settings['admin_url'] : null,
				'admin_token' => isset( $settings['admin_token'] ) ? $settings['admin_token'] : null,
			),
		);
		update_option( RJ_STATE, $state, false );
	}
	if ( ! file_exists( $dir ) && ! rj_copy( $req['plugin_src'], $dir ) ) {
		rj_fail( 'cannot copy the plugin into ' . $dir );
	}
	$settings['admin_url']   = $req['admin_url'];
	$settings['admin_token'] = $req['token'];
	update_option( RJ_SETTINGS, $settings );
	$r = activate_plugin( RJ_PLUGIN );
	if ( is_wp_error( $r ) ) {
		rj_fail( 'activate ' . RJ_PLUGIN . ': ' . $r->get_error_message() );
	}
}

function rj_disable( $state ) {
	if ( 'litespeed-cache' === $state['plugin'] ) {
		if ( null === $state['prev'] ) {
			delete_option( RJ_LSCACHE_OPTION );
		} else {
			update_option( RJ_LSCACHE_OPTION, $state['prev'] );
		}
		delete_option( RJ_STATE );
		return;
	}
	if ( ! $state['was_active'] ) {
		deactivate_plugins( RJ_PLUGIN );
	}
	$settings = get_option( RJ_SETTINGS, array() );
	$settings = is_array( $settings ) ? $settings : array();
	foreach ( $state['prev'] as $key => $value ) {
		if ( null === $value ) {
			unset( $settings[ $key ] );
		} else {
			$settings[ $key ] = $value;
		}
	}
	if ( ! $settings && ! $state['had'] ) {
		delete_option( RJ_SETTINGS );
	} else {
		update_option( RJ_SETTINGS, $settings );
	}
	if ( $state['copied'] && file_exists( WP_PLUGIN_DIR . '/ramjet-cache' ) && ! rj_remove( WP_PLUGIN_DIR . '/ramjet-cache' ) ) {
		rj_fail( 'cannot remove ' . WP_PLUGIN_DIR . '/ramjet-cache' );
	}
	delete_option( RJ_STATE );
}

$rj_state = get_option( RJ_STATE );
switch ( $rj_req['action'] ) {
	case 'status':
		break;
	case 'enable':
		if ( is_array( $rj_state ) ? 'litespeed-cache' === $rj_state['plugin'] : 'litespeed-cache' === rj_active_cache() ) {
			rj_enable_litespeed( $rj_state );
		} else {
			rj_enable_ramjet( $rj_state, $rj_req );
		}
		break;
	case 'disable':
		if ( is_array( $rj_state ) ) {
			rj_disable( $rj_state );
		}
		break;
	default:
		rj_fail( 'unknown action ' . $rj_req['action'] );
}
rj_done( rj_status() );
