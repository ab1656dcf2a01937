<?php
/**
 * SettingsPage: Settings → Ramjet Cache.
 *
 * @package RamjetCache
 */

namespace Ramjet\Cache;

/**
 * The settings page: TTL per page kind, exclusions, admin URL and token,
 * ESI blocks, and a connection test.
 */
class SettingsPage {

	/** Page slug. */
	const SLUG = 'ramjet-cache';

	/** admin-post.php action of the connection test. */
	const TEST_ACTION = 'ramjet_cache_test_connection';

	/**
	 * Settings.
	 *
	 * @var Settings
	 */
	private $settings;

	/**
	 * Admin API client.
	 *
	 * @var AdminClient
	 */
	private $client;

	/**
	 * Plugin basename, for the action link.
	 *
	 * @var string
	 */
	private $basename;

	/**
	 * The page.
	 *
	 * @param Settings    $settings Settings.
	 * @param AdminClient $client   Admin API client.
	 * @param string      $basename Plugin basename.
	 */
	public function __construct( Settings $settings, AdminClient $client, $basename ) {
		$this->settings = $settings;
		$this->client   = $client;
		$this->basename = $basename;
	}

	/**
	 * Hooks into WordPress.
	 */
	public function register() {
		add_action( 'admin_menu', array( $this, 'menu' ) );
		add_action( 'admin_init', array( $this, 'register_setting' ) );
		add_action( 'admin_post_' . self::TEST_ACTION, array( $this, 'test_connection' ) );
		add_filter( 'plugin_action_links_' . $this->basename, array( $this, 'action_links' ) );
		add_action( 'update_option_' . Settings::OPTION, array( $this->settings, 'reload' ) );
	}

	/**
	 * Adds the page under Settings.
	 */
	public function menu() {
		add_options_page( __( 'Ramjet Cache', 'ramjet-cache' ), __( 'Ramjet Cache', 'ramjet-cache' ), 'manage_options', self::SLUG, array( $this, 'render' ) );
	}

	/**
	 * Registers the option with its sanitizer.
	 */
	public function register_setting() {
		register_setting(
			self::SLUG,
			Settings::OPTION,
			array(
				'type'              => 'array',
				'sanitize_callback' => array( Settings::class, 'sanitize' ),
				'default'           => Settings::defaults(),
			)
		);
	}

	/**
	 * Adds "Settings" to the plugin's row.
	 *
	 * @param string[] $links Links.
	 * @return string[]
	 */
	public function action_links( $links ) {
		array_unshift( $links, sprintf( '<a href="%s">%s</a>', esc_url( admin_url( 'options-general.php?page=' . self::SLUG ) ), esc_html__( 'Settings', 'ramjet-cache' ) ) );
		return $links;
	}

	/**
	 * Calls the admin API with a purge of a tag nothing carries, and reports.
	 */
	public function test_connection() {
		if ( ! current_user_can( 'manage_options' ) ) {
			wp_die( esc_html__( 'You may not change these settings.', 'ramjet-cache' ), 403 );
		}
		check_admin_referer( self::TEST_ACTION );
		$result = $this->client->purge( array( 'ramjet-connection-test' ), array() );
		$status = is_wp_error( $result ) ? 'fail' : 'ok';
		set_transient( 'ramjet_cache_test_' . get_current_user_id(), is_wp_error( $result ) ? $result->get_error_message() : '', 60 );
		wp_safe_redirect( add_query_arg( 'ramjet-test', $status, admin_url( 'options-general.php?page=' . self::SLUG ) ) );
		exit;
	}

	/**
	 * Prints the page.
	 */
	public function render() {
		if ( ! current_user_can( 'manage_options' ) ) {
			return;
		}
		$values = $this->settings->all();
		$name   = Settings::OPTION;
		echo '<div class="wrap"><h1>' . esc_html__( 'Ramjet Cache', 'ramjet-cache' ) . '</h1>';
		$this->render_test_notice();
		echo '<form method="post" action="options.php">';
		settings_fields( self::SLUG );
		echo '<h2>' . esc_html__( 'Time to live (seconds, 0 = do not cache)', 'ramjet-cache' ) . '</h2><table class="form-table">';
		foreach ( Settings::TTL_KINDS as $kind ) {
			printf(
				'<tr><th><label for="ramjet-ttl-%1$s">%1$s</label></th><td><input type="number" min="0" id="ramjet-ttl-%1$s" name="%2$s[ttl_%1$s]" value="%3$d" /></td></tr>',
				esc_attr( $kind ),
				esc_attr( $name ),
				(int) $values[ 'ttl_' . $kind ]
			);
		}
		echo '</table><h2>' . esc_html__( 'Exclusions and ESI', 'ramjet-cache' ) . '</h2><table class="form-table">';
		$lists = array(
			'exclude_paths'   => __( 'Excluded paths (prefixes or shell patterns, one per line)', 'ramjet-cache' ),
			'exclude_cookies' => __( 'Excluded cookies (names or patterns, one per line)', 'ramjet-cache' ),
			'esi_shortcodes'  => __( 'Shortcodes served as ESI blocks', 'ramjet-cache' ),
			'esi_widgets'     => __( 'Widgets (id base) served as ESI blocks', 'ramjet-cache' ),
		);
		foreach ( $lists as $key => $label ) {
			printf(
				'<tr><th><label for="ramjet-%1$s">%2$s</label></th><td><textarea rows="4" cols="50" id="ramjet-%1$s" name="%3$s[%1$s]">%4$s</textarea></td></tr>',
				esc_attr( $key ),
				esc_html( $label ),
				esc_attr( $name ),
				esc_textarea( implode( "\n", (array) $values[ $key ] ) )
			);
		}
		foreach ( array(
			'esi'   => __( 'ESI blocks', 'ramjet-cache' ),
			'proxy' => __( 'Behind ramjet (purge in response headers)', 'ramjet-cache' ),
		) as $key => $label ) {
			printf( '<tr><th>%s</th><td><select name="%s[%s]">', esc_html( $label ), esc_attr( $name ), esc_attr( $key ) );
			foreach ( array( 'auto', 'on', 'off' ) as $mode ) {
				printf( '<option value="%1$s"%2$s>%1$s</option>', esc_attr( $mode ), selected( $values[ $key ], $mode, false ) );
			}
			echo '</select></td></tr>';
		}
		printf(
			'<tr><th>%s</th><td><input type="checkbox" name="%s[esi_admin_bar]" value="1"%s /></td></tr>',
			esc_html__( 'Admin bar as a private ESI block', 'ramjet-cache' ),
			esc_attr( $name ),
			checked( $values['esi_admin_bar'], true, false )
		);
		echo '</table><h2>' . esc_html__( 'ramjet admin API', 'ramjet-cache' ) . '</h2><table class="form-table">';
		foreach ( array(
			'admin_url'   => array( __( 'Admin URL', 'ramjet-cache' ), 'url', $this->settings->admin_url() ),
			'admin_token' => array( __( 'Token', 'ramjet-cache' ), 'password', $values['admin_token'] ),
		) as $key => $field ) {
			$fixed = $this->settings->is_constant( $key );
			printf(
				'<tr><th>%s</th><td><input type="%s" class="regular-text" name="%s[%s]" value="%s"%s />%s</td></tr>',
				esc_html( $field[0] ),
				esc_attr( $field[1] ),
				esc_attr( $name ),
				esc_attr( $key ),
				esc_attr( $fixed && 'admin_token' === $key ? '' : $field[2] ),
				$fixed ? ' disabled' : '',
				$fixed ? ' <em>' . esc_html__( 'set in wp-config.php', 'ramjet-cache' ) . '</em>' : ''
			);
		}
		echo '</table>';
		submit_button();
		echo '</form>';
		printf(
			'<p><a class="button" href="%s">%s</a></p></div>',
			esc_url( wp_nonce_url( admin_url( 'admin-post.php?action=' . self::TEST_ACTION ), self::TEST_ACTION ) ),
			esc_html__( 'Test connection', 'ramjet-cache' )
		);
	}

	/**
	 * Prints the result of the last connection test.
	 */
	private function render_test_notice() {
		// phpcs:ignore WordPress.Security.NonceVerification.Recommended -- display only.
		$status = isset( $_GET['ramjet-test'] ) ? sanitize_key( wp_unslash( $_GET['ramjet-test'] ) ) : '';
		if ( 'ok' === $status ) {
			echo '<div class="notice notice-success"><p>' . esc_html__( 'ramjet accepted a test purge.', 'ramjet-cache' ) . '</p></div>';
		} elseif ( 'fail' === $status ) {
			$message = (string) get_transient( 'ramjet_cache_test_' . get_current_user_id() );
			echo '<div class="notice notice-error"><p>' . esc_html( $message ) . '</p></div>';
		}
	}
}
