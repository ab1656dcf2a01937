<?php
/**
 * Plugin Name:       Ramjet Cache
 * Description:       Page caching for WordPress behind the ramjet caching proxy: cache control and tags in LSCache headers, exact purges, ESI blocks for nonce-bearing parts.
 * Version:           0.1.0
 * Requires at least: 6.1
 * Requires PHP:      8.1
 * Author:            ramjet
 * License:           MIT
 * Text Domain:       ramjet-cache
 *
 * @package RamjetCache
 */

if ( ! defined( 'WPINC' ) ) {
	exit;
}

require_once __DIR__ . '/src/autoload.php';

add_action( 'plugins_loaded', array( new \Ramjet\Cache\Plugin( __FILE__ ), 'register' ) );
